#include "scenario/sweep_spec.h"

#include <toml++/toml.h>

#include "scenario/scenario.h"

namespace safs {

std::vector<KeySpec> sweep_keys() {
  return {
      {"sweep.grid", ValueType::kStringList, "", std::vector<std::string>{},
       "Axes of the grid `safs-sim sweep` runs, each \"key=v1,v2,...\": a scenario key and its "
       "values, read as --set reads them (commas inside [...] do not split). Example: "
       "[\"transport.name=dctcp,safs\", \"pipeline.background_flows_per_stage=0,1,2\"]. Every "
       "combination is one point; `run` ignores this table.",
       false},
      {"sweep.metrics", ValueType::kStringList, "", std::vector<std::string>{},
       "Columns of the sweep's combined CSV after the grid keys: dotted paths into summary.json "
       "(\"compute.iteration_time_s\"). Empty = every number and boolean in summary.json outside "
       "lists, except the wall-clock ones (wall_s, events_per_s, peak_rss_mib).",
       false},
  };
}

namespace {

std::vector<std::string> strings(const toml::table& sweep, const char* key) {
  std::vector<std::string> result;
  if (const toml::array* list = sweep[key].as_array()) {
    for (const toml::node& item : *list) result.push_back(item.as_string()->get());
  }
  return result;
}

}  // namespace

SweepSpec load_sweep_spec(const std::string& path) {
  load_scenario(path);  // validates, [sweep] included
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ScenarioError(path + ": " + std::string(e.description()));
  }
  SweepSpec spec;
  if (const toml::table* sweep = root["sweep"].as_table()) {
    spec.grid = strings(*sweep, "grid");
    spec.metrics = strings(*sweep, "metrics");
  }
  return spec;
}

}  // namespace safs
