// An error in what the user gave (a missing run directory, a malformed
// option value): safs-sim reports it and exits with code 2, like a bad
// scenario file.
#pragma once

#include <stdexcept>

namespace safs::console {

class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace safs::console
