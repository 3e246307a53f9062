#include "cli/run_outputs.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <string_view>
#include <vector>

#include "console/bad_input.h"

namespace safs::cli {

namespace {

namespace fs = std::filesystem;

// Keep in step with run_command.cc, which writes them.
constexpr std::array<std::string_view, 6> kRunOutputs = {"flows.csv", "summary.json", "ops.csv",
                                                         "steps.csv", "requests.csv", "queues.csv"};

// Eight hex digits tell runs apart and keep the name short.
constexpr std::size_t kShortHashDigits = 8;

}  // namespace

bool is_run_output(const std::string& file_name) {
  std::string_view name = file_name;
  if (name.ends_with(".tmp")) name.remove_suffix(4);
  for (const std::string_view output : kRunOutputs) {
    if (name == output) return true;
    // A second or later job's copy: ops_2.csv (compute_workload.h).
    const std::string_view stem = output.substr(0, output.rfind('.'));
    const std::string_view extension = output.substr(stem.size());
    if (name.size() > output.size() + 1 && name.starts_with(stem) && name.ends_with(extension) &&
        name[stem.size()] == '_') {
      const std::string_view number = name.substr(stem.size() + 1, name.size() - output.size() - 1);
      if (std::all_of(number.begin(), number.end(), [](char c) { return c >= '0' && c <= '9'; }))
        return true;
    }
  }
  return false;
}

void prepare_output_dir(const std::string& dir, bool force) {
  if (dir.empty()) throw console::BadInput("--out: empty; expected a directory");
  std::error_code error;
  if (!fs::exists(dir, error)) {
    fs::create_directories(dir, error);
    if (error)
      throw console::BadInput("--out " + dir + ": cannot create (" + error.message() + ")");
    return;
  }
  if (!fs::is_directory(dir)) throw console::BadInput("--out " + dir + ": not a directory");
  std::vector<fs::path> earlier;  // this tool's files, the only ones --force removes
  std::string first_entry;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (first_entry.empty()) first_entry = entry.path().filename().string();
    if (entry.is_regular_file() && is_run_output(entry.path().filename().string()))
      earlier.push_back(entry.path());
  }
  if (first_entry.empty()) return;
  if (!force) {
    const std::string what = earlier.empty() ? first_entry : earlier.front().filename().string();
    throw console::BadInput("--out " + dir + ": not empty (holds " + what +
                            "); choose another directory, or add --force to replace an earlier "
                            "run's files (no other file is touched)");
  }
  for (const fs::path& path : earlier) fs::remove(path);
}

std::string default_output_dir(const std::string& scenario_path, const std::string& transport,
                               const std::string& fingerprint) {
  return "out/" + fs::path(scenario_path).stem().string() + "-" + transport + "-" +
         fingerprint.substr(0, kShortHashDigits);
}

namespace {

void check_output_file(const std::string& option_name, const std::string& path) {
  const std::string option = option_name + " " + path + ": ";
  if (fs::is_directory(path)) throw console::BadInput(option + "a directory; expected a file name");
  const fs::path parent = fs::path(path).has_parent_path() ? fs::path(path).parent_path() : ".";
  std::error_code error;
  fs::create_directories(parent, error);  // as --out is created
  if (!fs::is_directory(parent)) {
    throw console::BadInput(option + "cannot create directory " + parent.string());
  }
  const bool writable =
      fs::exists(path) ? access(path.c_str(), W_OK) == 0 : access(parent.c_str(), W_OK) == 0;
  if (!writable) throw console::BadInput(option + "not writable");
}

}  // namespace

void check_trace_path(const std::string& path, const std::string& scenario_file, bool force) {
  if (path.empty()) return;
  check_output_file("--trace", path);
  if (!fs::exists(path)) return;
  std::error_code error;
  if (fs::equivalent(path, scenario_file, error)) {
    throw console::BadInput("--trace " + path + ": is the scenario file; choose another name");
  }
  if (!force) {
    throw console::BadInput("--trace " + path +
                            ": exists; choose another name, or add --force to replace it");
  }
}

void check_new_output_file(const std::string& option, const std::string& path) {
  check_output_file(option, path);
  if (fs::exists(path)) {
    throw console::BadInput(option + " " + path +
                            ": exists; choose another name or remove it (it is never overwritten)");
  }
}

}  // namespace safs::cli
