// Runs sweep points as child processes of safs-sim itself, at most `jobs` at
// once: each point is a separate `safs-sim run`, so points share no state and
// one point that fails or crashes costs only itself.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace safs::sweep {

struct PointJob {
  std::vector<std::string> argv;  // argv[0] is the executable
  std::string log_path;           // the child's stdout and stderr
};

struct PointOutcome {
  bool ok = false;
  std::string status;  // "exit 1", "signal 11" when not ok
};

// Runs every job; `on_done(index, outcome)` is called as each one ends.
// SIGINT or SIGTERM while they run stops the running children (SIGTERM, then
// waits for each) and starts no more; the return value is that signal, or 0
// once every job has ended. Finished points are left as they are.
int run_point_processes(const std::vector<PointJob>& jobs, int parallel,
                        const std::function<void(std::size_t, const PointOutcome&)>& on_done);

// This executable's path (/proc/self/exe), to start copies of it.
std::string own_executable();

}  // namespace safs::sweep
