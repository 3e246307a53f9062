// An error in what the user gave (a scenario's value, a file it names) found
// below the layers that parse it: the command line reports it as bad input
// (exit 2), as it does a ScenarioError, and Python as a ValueError.
#pragma once

#include <stdexcept>

namespace safs {

struct InputError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

}  // namespace safs
