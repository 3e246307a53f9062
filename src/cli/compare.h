// `safs-sim compare DIR...`: one markdown table of the runs' summary.json
// files, a row per run and a column per metric.
#pragma once

#include <string>
#include <vector>

namespace safs::cli {

// `metrics`: dotted paths into summary.json ("urgent.missed_deadline"); empty
// for the default set. Each optionally "path:label:scale" (scale multiplies).
int compare(const std::vector<std::string>& dirs, const std::vector<std::string>& metrics);

}  // namespace safs::cli
