// Opening a file a scenario names (a flow-size CDF, a connection matrix, a
// Chakra trace): it must be a regular file of bounded size, so that a
// device (/dev/zero), a FIFO or a directory is refused with a message
// instead of read without end or blocked on.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ios>
#include <stdexcept>
#include <string>

#include "base/input_error.h"

namespace safs {

// Throws InputError "PATH: what it is; expected WHAT" for
// anything but a readable regular file of at most `max_bytes`.
inline std::ifstream open_input_file(const std::string& path, std::uintmax_t max_bytes,
                                     const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::file_status status = fs::status(path, error);  // stat: never opens it
  if (status.type() == fs::file_type::not_found) {
    throw InputError(path + ": cannot be read (no such file); expected " + what);
  }
  if (error)
    throw InputError(path + ": cannot be read (" + error.message() + "); expected " + what);
  if (status.type() != fs::file_type::regular) {
    const fs::file_type type = status.type();
    const char* kind = type == fs::file_type::directory   ? "a directory"
                       : type == fs::file_type::fifo      ? "a FIFO"
                       : type == fs::file_type::character ? "a character device"
                       : type == fs::file_type::block     ? "a block device"
                       : type == fs::file_type::socket    ? "a socket"
                                                          : "not a regular file";
    throw InputError(path + ": " + kind + "; expected " + what);
  }
  const std::uintmax_t size = fs::file_size(path, error);
  if (!error && size > max_bytes) {
    throw InputError(path + ": " + std::to_string(size) + " bytes; expected " + what +
                     " of at most " + std::to_string(max_bytes) + " bytes");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot be read; expected " + what);
  return in;
}

}  // namespace safs
