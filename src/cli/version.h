// The tool's version and the source commit it was built from, as recorded by
// CMake at configure time (`git describe --always --dirty`, or "unknown"
// outside a git checkout). Only version.cc sees the generated header, so a
// new commit recompiles one file.
#pragma once

#include <string>

namespace safs::cli {

std::string version();        // "0.1.0"
std::string source_commit();  // "bb3c278-dirty" or "unknown"
std::string version_line();   // "safs-sim 0.1.0 (source bb3c278-dirty)"

}  // namespace safs::cli
