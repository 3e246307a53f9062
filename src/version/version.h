// The version every tool reports (--version, summary.json's provenance) and
// the source commit it was built from. The commit is read at build time, not
// when CMake configures, so it never goes stale after later commits: only
// version.cc sees the generated header, which is rewritten only when the
// commit changes (src/version/CMakeLists.txt).
#pragma once

#include <string>
#include <string_view>

namespace safs {

std::string version();        // "0.1.0"
std::string source_commit();  // "bb3c278", "bb3c278-dirty", or "unknown"
// "safs-rt 0.1.0 (source bb3c278)"
std::string version_line(std::string_view tool);
// The machine a result was produced on, for provenance; "unknown" if unnamed.
std::string host_name();

}  // namespace safs
