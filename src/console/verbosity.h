// How much safs-sim says: --quiet (nothing on success), normal (one final
// line, a progress bar on a terminal), --verbose (also the configuration and
// per-item detail).
#pragma once

namespace safs::console {

enum class Verbosity { kQuiet, kNormal, kVerbose };

}  // namespace safs::console
