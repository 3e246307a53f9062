// A flow-size distribution read from a CSV file of (size, cumulative
// fraction) points. Two conventions, chosen by the header:
//   "packets,cdf": sizes in 1460-byte packets, sampled by linear
//     interpolation between points (ns-2's EmpiricalRandomVariable, as the
//     DCTCP/pFabric/PIAS scripts use for web search and data mining);
//   "bytes,cdf": sizes in bytes, a discrete distribution (Homa's W1-W5 are
//     per-length frequencies: a size between two points never occurs).
// Lines starting with '#' are comments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/rng.h"

namespace safs {

class FlowSizeCdf {
 public:
  // Throws std::runtime_error naming the file and line on a malformed file.
  static FlowSizeCdf load(const std::string& path);

  std::uint64_t sample(Rng& rng) const;
  double mean_bytes() const { return mean_bytes_; }
  std::uint64_t max_bytes() const;

 private:
  struct Point {
    double bytes;
    double cdf;
  };
  std::vector<Point> points_;
  bool interpolate_ = false;
  double mean_bytes_ = 0;
};

inline constexpr double kCdfPacketBytes = 1460;  // the ns-2 scripts' packet payload

}  // namespace safs
