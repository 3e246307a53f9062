#include "sweep/point_processes.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>

extern char** environ;

namespace safs::sweep {

namespace {

pid_t spawn(const PointJob& job) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, job.log_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  std::vector<char*> argv;
  for (const std::string& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw std::runtime_error(job.argv[0] + ": cannot start: " + std::strerror(error));
  return pid;
}

volatile std::sig_atomic_t stop_signal = 0;

extern "C" void note_stop_signal(int signal) { stop_signal = signal; }

// SIGINT and SIGTERM set stop_signal and interrupt waitpid (no SA_RESTART)
// while the sweep's children run; the earlier handlers come back after.
class StopSignals {
 public:
  StopSignals() {
    stop_signal = 0;
    struct sigaction action {};
    action.sa_handler = note_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &old_int_);
    sigaction(SIGTERM, &action, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

void stop_all(const std::map<pid_t, std::size_t>& running) {
  for (const auto& [pid, index] : running) kill(pid, SIGTERM);
  for (const auto& [pid, index] : running) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
}

PointOutcome outcome_of(int status) {
  if (WIFEXITED(status)) {
    const int code = WEXITSTATUS(status);
    return {code == 0, code == 0 ? "" : "exit " + std::to_string(code)};
  }
  if (WIFSIGNALED(status)) return {false, "signal " + std::to_string(WTERMSIG(status))};
  return {false, "unknown status"};
}

}  // namespace

int run_point_processes(const std::vector<PointJob>& jobs, int parallel,
                        const std::function<void(std::size_t, const PointOutcome&)>& on_done) {
  const StopSignals signals;
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    if (stop_signal != 0) {
      stop_all(running);
      return stop_signal;
    }
    while (next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      running[spawn(jobs[next])] = next;
      ++next;
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const std::size_t index = it->second;
    running.erase(it);
    on_done(index, outcome_of(status));
  }
  return 0;
}

std::string own_executable() { return std::filesystem::read_symlink("/proc/self/exe").string(); }

}  // namespace safs::sweep
