// `safs-sim fct DIR...`: the classic FCT-slowdown-by-flow-size table from the
// runs' flows.csv: for each size bucket, the number of completed flows and
// their mean and 99th-percentile slowdown, one row per run.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace safs::cli {

int fct_table(const std::vector<std::string>& dirs, const std::vector<std::uint64_t>& bucket_edges);

}  // namespace safs::cli
