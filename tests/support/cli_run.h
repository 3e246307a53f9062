// Running safs-sim (or another tool) from a test as a user would: its exit
// code and everything it printed (stdout and stderr together).
#pragma once

#include <gtest/gtest.h>
#include <algorithm>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

namespace safs::testing {

// One 100 kB flow on three hosts: a run that takes milliseconds.
inline constexpr const char* kSmallScenario =
    "[topology]\nhosts = 3\n[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = 100000\n";

struct CliResult {
  int exit_code;
  std::string output;
};

// ctest runs tests in parallel processes, and parameterised tests share
// file names: each process writes its temporary files in a directory of its
// own, so that one test never reads a file another is rewriting. A directory
// left by an earlier process with the same (reused) PID is emptied first: a
// test that writes a run to a fresh --out must not find that one's files.
// The process removes its directory when it exits (a forked child, as in a
// death test, leaves it to its parent).
inline const std::filesystem::path& process_temp_dir() {
  struct OwnDirectory {
    OwnDirectory()
        : owner(::getpid()),
          path(std::filesystem::temp_directory_path() / ("safs-test-" + std::to_string(owner))) {
      std::filesystem::remove_all(path);
      std::filesystem::create_directories(path);
    }
    ~OwnDirectory() {
      std::error_code ignored;
      if (::getpid() == owner) std::filesystem::remove_all(path, ignored);
    }
    pid_t owner;
    std::filesystem::path path;
  };
  static const OwnDirectory dir;
  return dir.path;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

inline bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// `args` is passed to the shell after the binary's path.
inline CliResult run_tool(const std::string& binary, const std::string& args) {
  // ctest runs tests in parallel: one log per test.
  std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  std::replace(test.begin(), test.end(), '/', '_');  // a parameterised test's name
  const std::filesystem::path log = process_temp_dir() / ("safs-cli-" + test + ".log");
  const std::string command = binary + " " + args + " >" + log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_text(log)};
}

#ifdef SAFS_SIM_PATH
inline CliResult run_cli(const std::string& args) { return run_tool(SAFS_SIM_PATH, args); }
#endif

inline std::filesystem::path write_temp(const std::string& name, const std::string& text) {
  const std::filesystem::path path = process_temp_dir() / name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace safs::testing
