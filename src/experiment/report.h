// Writes a finished run's outputs: flows.csv (one row per flow), the files
// its workloads report (ops.csv, requests.csv, ...) and summary.json. Files are written to a
// temporary name and renamed, so an interrupted run never leaves a half-written file over an
// earlier result.
#pragma once

#include <string>
#include <vector>

#include "experiment/experiment.h"

namespace safs {

// Where a result came from, for summary.json's "provenance" (left out of
// byte-identical comparisons: it names the host, the time and the command).
struct Provenance {
  std::vector<std::string> command_line;
  std::vector<std::string> overrides;  // --set as given (--transport, --seed included)
  std::string scenario_fingerprint;    // see console/effective_scenario.h
  std::string scenario_text_hash;
  std::string tool_version;
  std::string source_commit;
  std::string host;
  std::string effective_scenario_toml;  // the file after every override
};

struct RunInfo {
  std::string scenario_path;
  std::string scenario_text;  // echoed into summary.json
  double wall_seconds = 0;    // the run alone
  double setup_wall_seconds = 0;
  Provenance provenance;
};

// flows.csv's and summary.json's text, for callers that keep a run's
// outputs in memory (the Python module); the writers below write exactly these.
std::string flows_csv_text(const Experiment& experiment);
std::string summary_json_text(Experiment& experiment, const RunReport& report, const RunInfo& info);

void write_flows_csv(const Experiment& experiment, const std::string& path);
// Each of the report's files, into `dir`.
void write_report_files(const RunReport& report, const std::string& dir);
// The run's totals, then the report's sections (after the flow classes).
void write_summary_json(Experiment& experiment, const RunReport& report, const RunInfo& info,
                        const std::string& path);

// The busiest switch-to-host link's busy time over [first flow start, now].
double busiest_downlink_utilisation(Experiment& experiment);

// Replaces `path` with `contents` atomically (write to path.tmp, then rename).
void write_file_atomically(const std::string& path, const std::string& contents);

}  // namespace safs
