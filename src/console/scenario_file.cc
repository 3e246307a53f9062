#include "console/scenario_file.h"

#include <filesystem>
#include <fstream>

#include "console/bad_input.h"

namespace safs::console {

namespace {

namespace fs = std::filesystem;

std::string kind_of(fs::file_type type) {
  switch (type) {
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::character:
      return "a character device";
    case fs::file_type::block:
      return "a block device";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a regular file";
  }
}

bool only_blanks(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  for (char c; in.get(c);) {
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return false;
  }
  return true;
}

}  // namespace

void check_scenario_file(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::status(path, error);  // stat: never opens the file
  if (error || status.type() == fs::file_type::not_found) return;
  if (status.type() != fs::file_type::regular) {
    throw BadInput(path + ": " + kind_of(status.type()) + "; expected a scenario file (TOML)");
  }
  if (only_blanks(path)) {
    throw BadInput(path + ": empty; expected a scenario file (TOML)");
  }
}

}  // namespace safs::console
