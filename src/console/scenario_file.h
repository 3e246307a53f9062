// A scenario path is checked before anything opens it: a directory, a FIFO
// (which would block the reader for ever), a device such as /dev/null or an
// empty file is an error (BadInput, exit 2), not an empty run.
#pragma once

#include <string>

namespace safs::console {

// Throws BadInput naming `path` and what was expected. Missing files are left
// to the loader, which reports them with its own message.
void check_scenario_file(const std::string& path);

}  // namespace safs::console
