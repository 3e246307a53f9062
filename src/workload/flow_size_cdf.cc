#include "workload/flow_size_cdf.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "base/input_file.h"

namespace safs {

FlowSizeCdf FlowSizeCdf::load(const std::string& path) {
  // A CDF is a few hundred lines; 16 MiB is far beyond any.
  std::ifstream in = open_input_file(path, std::uintmax_t{16} << 20, "a flow-size CDF (CSV)");
  FlowSizeCdf cdf;
  std::string line;
  int line_no = 0;
  bool header_seen = false;
  double unit = 1;
  auto fail = [&](const std::string& what) {
    throw std::runtime_error(path + ":" + std::to_string(line_no) + ": " + what);
  };
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty() || line[0] == '#') continue;
    if (!header_seen) {
      header_seen = true;
      if (line.rfind("packets,cdf", 0) == 0) {
        cdf.interpolate_ = true;
        unit = kCdfPacketBytes;
      } else if (line.rfind("bytes,cdf", 0) != 0) {
        fail("expected the header 'packets,cdf' or 'bytes,cdf'");
      }
      continue;
    }
    std::stringstream fields(line);
    std::string size_text, cdf_text;
    std::getline(fields, size_text, ',');
    std::getline(fields, cdf_text);
    double size = 0, fraction = 0;
    try {
      size = std::stod(size_text) * unit;
      fraction = std::stod(cdf_text);
    } catch (const std::exception&) {
      fail("expected two numbers, got '" + line + "'");
    }
    // The bound of every flow size a scenario gives (flows.size_bytes).
    constexpr double kMaxFlowBytes = 1e15;
    if (!(size >= 1 && size <= kMaxFlowBytes) || !(fraction >= 0 && fraction <= 1)) {
      fail("size must be 1 to 1e15 bytes and cdf in [0, 1]");
    }
    if (!cdf.points_.empty() &&
        (fraction < cdf.points_.back().cdf || size < cdf.points_.back().bytes)) {
      fail("sizes and cumulative fractions must not decrease");
    }
    cdf.points_.push_back({size, fraction});
  }
  if (cdf.points_.empty()) fail("no points");
  if (std::abs(cdf.points_.back().cdf - 1.0) > 1e-6) fail("the last cumulative fraction must be 1");
  cdf.points_.back().cdf = 1.0;

  // Mean: trapezoids between points when interpolating, else probability
  // mass at each point.
  double previous_cdf = 0, previous_bytes = cdf.points_.front().bytes, mean = 0;
  for (const Point& p : cdf.points_) {
    const double mass = p.cdf - previous_cdf;
    mean += mass * (cdf.interpolate_ ? (previous_bytes + p.bytes) / 2 : p.bytes);
    previous_cdf = p.cdf;
    previous_bytes = p.bytes;
  }
  cdf.mean_bytes_ = mean;
  return cdf;
}

std::uint64_t FlowSizeCdf::sample(Rng& rng) const {
  const double u = rng.uniform();
  const auto it = std::lower_bound(points_.begin(), points_.end(), u,
                                   [](const Point& p, double value) { return p.cdf < value; });
  const Point& hi = it == points_.end() ? points_.back() : *it;
  double bytes = hi.bytes;
  if (interpolate_ && it != points_.begin() && it != points_.end()) {
    const Point& lo = *(it - 1);
    if (hi.cdf > lo.cdf)
      bytes = lo.bytes + (hi.bytes - lo.bytes) * (u - lo.cdf) / (hi.cdf - lo.cdf);
  }
  return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(bytes)));
}

std::uint64_t FlowSizeCdf::max_bytes() const {
  return static_cast<std::uint64_t>(std::llround(points_.back().bytes));
}

}  // namespace safs
