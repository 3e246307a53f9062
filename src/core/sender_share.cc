#include "core/sender_share.h"

#include <algorithm>
#include <numeric>

namespace safs::core {

std::vector<double> achievable_rates(const std::vector<SenderFlow>& flows, double uplink_bps) {
  std::vector<std::size_t> order(flows.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SenderFlow& x = flows[a];
    const SenderFlow& y = flows[b];
    if (x.urgent != y.urgent) return x.urgent;
    if (x.slack_ps != y.slack_ps) return x.slack_ps < y.slack_ps;
    return x.id < y.id;
  });
  std::vector<double> rate(flows.size(), 0.0);
  double left = uplink_bps;
  for (const std::size_t i : order) {
    rate[i] = std::max(0.0, std::min(flows[i].granted_bps, left));
    left -= rate[i];
  }
  return rate;
}

}  // namespace safs::core
