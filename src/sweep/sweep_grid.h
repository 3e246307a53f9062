// A sweep's grid: axes "key=v1,v2,..." expand into points (every
// combination, the first axis varying slowest), each named after its
// assignments so that its output directory is the same from run to run.
#pragma once

#include <string>
#include <vector>

namespace safs::sweep {

struct Assignment {
  std::string key;    // scenario key, "pipeline.background_flows_per_stage"
  std::string value;  // as written in the grid; read as --set reads it
  std::string override_text() const { return key + "=" + value; }
};

struct GridAxis {
  std::string key;
  std::vector<std::string> values;
};

struct SweepPoint {
  std::vector<Assignment> assignments;  // one per axis, in axis order
  std::string name;  // directory name, e.g. "name=safs,background_flows_per_stage=2"
};

// "key=v1,v2"; commas inside [...] or "..." do not split. Throws BadInput.
GridAxis parse_axis(const std::string& text);

// Throws BadInput naming `where` if two axes have the same key (the first
// would silently be lost).
void check_distinct_keys(const std::vector<GridAxis>& axes, const std::string& where);

// `later` axes replace earlier ones with the same key (the command line over
// the file) and are appended otherwise.
std::vector<GridAxis> merge_axes(std::vector<GridAxis> axes, const std::vector<GridAxis>& later);

// Every combination, named; throws BadInput if two points get the same name.
std::vector<SweepPoint> expand_grid(const std::vector<GridAxis>& axes);

// point.txt in a point's directory: its assignments, one key=value a line, so
// `compare` can match runs of the same point.
void write_point_file(const std::string& dir, const SweepPoint& point);
std::vector<Assignment> read_point_file(const std::string& dir);

}  // namespace safs::sweep
