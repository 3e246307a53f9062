#include "net/route.h"

#include <algorithm>

namespace safs {

std::uint64_t Route::bottleneck_bps() const {
  return rate_bps.empty() ? 0 : *std::min_element(rate_bps.begin(), rate_bps.end());
}

TimePs Route::packet_latency_ps(std::uint64_t wire_bytes) const {
  TimePs total = propagation_ps;
  for (const std::uint64_t rate : rate_bps) total += serialization_ps(wire_bytes, rate);
  return total;
}

}  // namespace safs
