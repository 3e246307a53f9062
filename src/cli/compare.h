// `safs-sim compare DIR...`: one markdown table of the runs' summary.json
// files, a row per run and a column per metric, optionally with each value's
// ratio to a baseline run.
#pragma once

#include <string>
#include <vector>

namespace safs::cli {

struct CompareOptions {
  // Run directories; a sweep's output directory stands for all its points.
  std::vector<std::string> dirs;
  // Dotted paths into summary.json ("urgent.missed_deadline"); empty for the
  // default set. Each optionally "path:label:scale" (scale multiplies).
  std::vector<std::string> metrics;
  // Empty, a run directory, or a transport name. A transport name picks, for
  // each run, the run with that transport and otherwise the same sweep point
  // (or the only run with that transport, outside sweeps).
  std::string baseline;
};

int compare(const CompareOptions& options);

}  // namespace safs::cli
