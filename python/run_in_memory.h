// One run, as `safs-sim run` does it, with its output files kept in memory:
// the same text the CLI writes to flows.csv, ops.csv, ..., summary.json.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace safs {
struct ExperimentConfig;
}  // namespace safs

namespace safs::python {

struct RunRequest {
  std::string scenario_text;
  std::string scenario_name;  // the file's path, or "<dict>": in messages and summary.json
  std::vector<std::string> overrides;
  double queue_sample_us = 0;             // > 0: also queues.csv, as run --queue-sample-us
  std::vector<std::string> command_line;  // for summary.json's provenance
  // Adds workloads the scenario text cannot hold (Python ones) after parsing.
  std::function<void(ExperimentConfig&)> add_workloads;
};

struct RunFiles {
  std::vector<std::pair<std::string, std::string>> files;  // name, contents
  std::vector<std::string> warnings;                       // what the CLI prints on stderr
};

// Throws ScenarioError (or console::BadInput) for what the CLI rejects with
// exit 2. Touches no Python object: callers release the GIL around it.
RunFiles run_in_memory(const RunRequest& request);

}  // namespace safs::python
