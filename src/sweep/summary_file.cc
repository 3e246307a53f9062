#include "sweep/summary_file.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include "console/bad_input.h"

namespace safs::sweep {

nlohmann::ordered_json read_summary(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw console::BadInput(path + ": cannot open");
  nlohmann::ordered_json summary;
  try {
    // Ordered, so flattened leaves keep the file's order.
    summary = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw console::BadInput(path + ": not valid JSON (" + e.what() + ")");
  }
  if (!summary.is_object()) {
    throw console::BadInput(path + ": a JSON " + summary.type_name() +
                            "; expected an object (a safs-sim summary.json)");
  }
  return summary;
}

const nlohmann::ordered_json* lookup(const nlohmann::ordered_json& root,
                                     const std::string& dotted_path) {
  const nlohmann::ordered_json* node = &root;
  std::stringstream in(dotted_path);
  std::string part;
  while (std::getline(in, part, '.')) {
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
  }
  return node;
}

namespace {

// Measurements of the machine rather than the simulation, and provenance
// (host, command line): they differ from run to run.
constexpr std::array<const char*, 6> kWallClockKeys = {
    "wall_s", "setup_wall_s", "run_wall_s", "events_per_s", "peak_rss_mib", "provenance"};

void collect(const nlohmann::ordered_json& node, const std::string& path,
             std::vector<std::pair<std::string, nlohmann::ordered_json>>& out) {
  if (node.is_number() || node.is_boolean()) {
    out.emplace_back(path, node);
    return;
  }
  if (!node.is_object()) return;  // lists and strings are not columns
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (path.empty() &&
        std::find(kWallClockKeys.begin(), kWallClockKeys.end(), it.key()) != kWallClockKeys.end()) {
      continue;
    }
    collect(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
  }
}

}  // namespace

std::vector<std::pair<std::string, nlohmann::ordered_json>> numeric_leaves(
    const nlohmann::ordered_json& root) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> leaves;
  collect(root, "", leaves);
  return leaves;
}

}  // namespace safs::sweep
