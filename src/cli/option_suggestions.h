// "Did you mean" for the command line: after CLI11 rejects the arguments,
// names the closest subcommand or option to each unknown one.
#pragma once

#include <CLI/CLI.hpp>

namespace safs::cli {

// Prints "did you mean" lines on stderr for unknown subcommands and options.
void suggest_options(const CLI::App& app, int argc, char** argv);

}  // namespace safs::cli
