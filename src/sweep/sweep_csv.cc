#include "sweep/sweep_csv.h"

#include <algorithm>

#include "sweep/summary_file.h"

namespace safs::sweep {

namespace {

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (const char c : text) quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

}  // namespace

PointRow read_point_row(std::size_t point, const std::string& summary_path,
                        const std::vector<std::string>& metrics) {
  const nlohmann::ordered_json summary = read_summary(summary_path);
  PointRow row{point, {}};
  if (metrics.empty()) {
    for (const auto& [path, value] : numeric_leaves(summary)) {
      row.metrics.emplace_back(path, value.dump());
    }
    return row;
  }
  for (const std::string& path : metrics) {
    const nlohmann::ordered_json* v = lookup(summary, path);
    row.metrics.emplace_back(path, v == nullptr || v->is_structured() ? "" : v->dump());
  }
  return row;
}

std::string combined_csv(const std::vector<GridAxis>& axes, const std::vector<SweepPoint>& points,
                         std::vector<PointRow> rows) {
  std::sort(rows.begin(), rows.end(),
            [](const PointRow& a, const PointRow& b) { return a.point < b.point; });
  std::vector<std::string> columns;
  for (const PointRow& row : rows) {
    for (const auto& [column, value] : row.metrics) {
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) {
        columns.push_back(column);
      }
    }
  }
  std::string csv = "point";
  for (const GridAxis& axis : axes) csv += "," + csv_field(axis.key);
  for (const std::string& column : columns) csv += "," + csv_field(column);
  csv += "\n";
  for (const PointRow& row : rows) {
    const SweepPoint& point = points[row.point];
    csv += csv_field(point.name);
    for (const Assignment& a : point.assignments) csv += "," + csv_field(a.value);
    for (const std::string& column : columns) {
      const auto it = std::find_if(row.metrics.begin(), row.metrics.end(),
                                   [&](const auto& m) { return m.first == column; });
      csv += "," + (it == row.metrics.end() ? std::string() : csv_field(it->second));
    }
    csv += "\n";
  }
  return csv;
}

}  // namespace safs::sweep
