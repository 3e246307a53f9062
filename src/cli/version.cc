#include "cli/version.h"

#include "cli/build_version.h"

namespace safs::cli {

std::string version() { return SAFS_VERSION; }
std::string source_commit() { return SAFS_SOURCE_COMMIT; }
std::string version_line() { return "safs-sim " + version() + " (source " + source_commit() + ")"; }

}  // namespace safs::cli
