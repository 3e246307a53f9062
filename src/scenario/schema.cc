#include "scenario/schema.h"

#include <algorithm>

#include "experiment/workload_kind.h"
#include "scenario/sections.h"
#include "scenario/suggest.h"
#include "scenario/sweep_spec.h"
#include "transport/registry.h"

namespace safs {

namespace {

std::vector<KeySpec> with_prefix(std::vector<KeySpec> specs, const std::string& prefix) {
  for (KeySpec& spec : specs) spec.path = prefix + spec.path;
  return specs;
}

std::vector<KeySpec> build_keys() {
  using VT = ValueType;
  std::vector<KeySpec> k;
  auto add = [&k](std::vector<KeySpec> specs) {
    for (KeySpec& spec : specs) k.push_back(std::move(spec));
  };
  add(simulation_knobs().describe("simulation."));
  add(topology_knobs().describe("topology."));
  add(network_knobs().describe("network."));
  KeySpec transport_name{
      "transport.name", VT::kString, "", std::string(ExperimentConfig{}.transport),
      "The transport of the workload's flows: every flow, or with `background` set, the "
      "urgent ones."};
  for (const TransportInfo& t : all_transports()) transport_name.choices.emplace_back(t.name);
  k.push_back(transport_name);
  KeySpec background{"transport.background", VT::kString, "",
                     ExperimentConfig{}.background_transport,
                     "The transport of the background flows (mixed tenants), with its keys "
                     "read from its own [transport.NAME] table; urgent flows run on `name`. "
                     "Empty: every flow runs on `name`. `--transport` sets `name` only."};
  background.choices = transport_name.choices;
  k.push_back(background);
  for (const WorkloadKind& kind : workload_kinds()) {
    // A table-or-array section's keys are named as for its table form.
    add(with_prefix(kind.keys,
                    std::string(kind.section) + (kind.form == SectionForm::kArray ? "[]." : ".")));
  }
  add(timestamp_knobs().describe("timestamps."));
  add(jitter_knobs().describe("jitter."));
  for (const TransportInfo& t : all_transports()) {
    add(with_prefix(t.keys, "transport." + std::string(t.name) + "."));
  }
  // Last, so the reference lists them after the scenario itself.
  add(sweep_keys());
  return k;
}

std::vector<std::string> known_tables() {
  std::vector<std::string> tables;
  for (const KeySpec& spec : scenario_keys()) {
    for (std::size_t dot = spec.path.find('.'); dot != std::string::npos;
         dot = spec.path.find('.', dot + 1)) {
      tables.push_back(spec.path.substr(0, dot));
    }
  }
  std::sort(tables.begin(), tables.end());
  tables.erase(std::unique(tables.begin(), tables.end()), tables.end());
  return tables;
}

}  // namespace

const std::vector<KeySpec>& scenario_keys() {
  static const std::vector<KeySpec> keys = build_keys();
  return keys;
}

const KeySpec* find_key(const std::string& path) {
  for (const KeySpec& spec : scenario_keys()) {
    if (spec.path == path) return &spec;
  }
  return nullptr;
}

bool is_known_table(const std::string& path) {
  static const std::vector<std::string> tables = known_tables();
  return std::binary_search(tables.begin(), tables.end(), path);
}

bool is_table_or_array(const std::string& path) {
  for (const WorkloadKind& kind : workload_kinds()) {
    if (kind.form == SectionForm::kTableOrArray && kind.section == path) return true;
  }
  return false;
}

std::string closest_key(const std::string& path) {
  std::vector<std::string> candidates;
  for (const KeySpec& spec : scenario_keys()) candidates.push_back(spec.path);
  for (const std::string& table : known_tables()) candidates.push_back(table);
  return closest_match(path, candidates);
}

}  // namespace safs
