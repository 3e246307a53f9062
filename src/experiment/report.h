// Writes a finished run's outputs: flows.csv (one row per flow) and
// summary.json. Files are written to a temporary name and renamed, so an
// interrupted run never leaves a half-written file over an earlier result.
#pragma once

#include <string>

#include "experiment/experiment.h"

namespace safs {

struct RunInfo {
  std::string scenario_path;
  std::string scenario_text;  // echoed into summary.json
  double wall_seconds = 0;
};

void write_flows_csv(const Experiment& experiment, const std::string& path);
void write_summary_json(Experiment& experiment, const RunInfo& info, const std::string& path);

// ops.csv: one row per op of the computation (label, GPU, planned and actual
// start, end, and the wait before it). Only for runs with a computation.
void write_ops_csv(const Experiment& experiment, const std::string& path);

// The busiest switch-to-host link's busy time over [first flow start, now].
double busiest_downlink_utilisation(Experiment& experiment);

// Replaces `path` with `contents` atomically (write to path.tmp, then rename).
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace safs
