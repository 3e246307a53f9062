#include "core/sender_share.h"

#include <algorithm>
#include <numeric>

namespace safs::core {

namespace {

// Urgent before background, least slack first, then id: a total order.
std::vector<std::size_t> service_order(const std::vector<SenderFlow>& flows) {
  std::vector<std::size_t> order(flows.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SenderFlow& x = flows[a];
    const SenderFlow& y = flows[b];
    if (x.urgent != y.urgent) return x.urgent;
    if (x.slack_ps != y.slack_ps) return x.slack_ps < y.slack_ps;
    return x.id < y.id;
  });
  return order;
}

}  // namespace

std::vector<double> achievable_rates(const std::vector<SenderFlow>& flows, double uplink_bps) {
  const std::vector<std::size_t> order = service_order(flows);
  std::vector<double> rate(flows.size(), 0.0);
  double left = uplink_bps;
  for (const std::size_t i : order) {
    rate[i] = std::max(0.0, std::min(flows[i].granted_bps, left));
    left -= rate[i];
  }
  return rate;
}

std::vector<double> available_rates(const std::vector<SenderFlow>& flows, double uplink_bps) {
  const std::vector<std::size_t> order = service_order(flows);
  std::vector<double> available(flows.size(), 0.0);
  double used = 0;
  for (const std::size_t i : order) {
    available[i] = std::max(0.0, uplink_bps - used);
    used += flows[i].granted_bps;
  }
  return available;
}

}  // namespace safs::core
