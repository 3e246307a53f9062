#include "version/version.h"

#include <unistd.h>

#include "safs_source_version.h"  // generated: SAFS_VERSION, SAFS_SOURCE_COMMIT

namespace safs {

std::string version() { return SAFS_VERSION; }
std::string source_commit() { return SAFS_SOURCE_COMMIT; }
std::string version_line(std::string_view tool) {
  return std::string(tool) + " " + version() + " (source " + source_commit() + ")";
}
std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof name - 1) == 0 ? name : "unknown";
}

}  // namespace safs
