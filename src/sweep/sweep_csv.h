// The sweep's combined CSV: one row per finished point, the point's name and
// grid values, then the chosen metrics from its summary.json.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "sweep/sweep_grid.h"

namespace safs::sweep {

struct PointRow {
  std::size_t point = 0;                                     // index into the grid's points
  std::vector<std::pair<std::string, std::string>> metrics;  // column, value as text
};

// `metrics` empty: every numeric leaf (see numeric_leaves).
PointRow read_point_row(std::size_t point, const std::string& summary_path,
                        const std::vector<std::string>& metrics);

// Columns: point, each axis key, then the metrics in the order first met
// (rows in point order, so the file depends only on the runs' results).
std::string combined_csv(const std::vector<GridAxis>& axes, const std::vector<SweepPoint>& points,
                         std::vector<PointRow> rows);

}  // namespace safs::sweep
