#include "core/sender_share.h"

#include <algorithm>
#include <numeric>

namespace safs::core {

namespace {

// Urgent before background, least slack (or earliest timestamp) first, then
// id: a total order.
void service_order(const std::vector<SenderFlow>& flows, std::vector<std::size_t>& order,
                   bool urgent_by_deadline = false) {
  order.resize(flows.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const SenderFlow& x = flows[a];
    const SenderFlow& y = flows[b];
    if (x.urgent != y.urgent) return x.urgent;
    if (urgent_by_deadline && x.urgent && x.no_bubble_ps != y.no_bubble_ps) {
      return x.no_bubble_ps < y.no_bubble_ps;
    }
    if (x.slack_ps != y.slack_ps) return x.slack_ps < y.slack_ps;
    return x.id < y.id;
  });
}

std::vector<std::size_t> service_order(const std::vector<SenderFlow>& flows) {
  std::vector<std::size_t> order;
  service_order(flows, order);
  return order;
}

}  // namespace

SenderFlow sender_flow(FlowId id, double granted_bps, bool urgent, TimePs no_bubble_ps,
                       std::uint64_t remaining_bytes, double uplink_bps, TimePs now) {
  // Capped far beyond any real transfer (weeks), so the slack cannot overflow.
  const TimePs remaining_ps =
      std::min(transfer_ps(static_cast<double>(remaining_bytes), uplink_bps), kTimeNever / 4);
  const bool timed = urgent && no_bubble_ps != kTimeNever;
  SenderFlow f;
  f.id = id;
  f.granted_bps = granted_bps;
  f.urgent = urgent;
  f.slack_ps = timed ? no_bubble_ps - now - remaining_ps : remaining_ps;
  f.remaining_bytes = remaining_bytes;
  f.no_bubble_ps = timed ? no_bubble_ps : kTimeNever;
  return f;
}

std::uint64_t blind_bytes(std::uint64_t flow_bytes, double budget_bytes,
                          double whole_flow_budgets) {
  if (static_cast<double>(flow_bytes) <= whole_flow_budgets * budget_bytes) return flow_bytes;
  return std::min(flow_bytes, static_cast<std::uint64_t>(budget_bytes));
}

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
  std::vector<std::size_t> order;
  std::vector<double> available;
  std::vector<TimePs> waits;
  uplink_shares(flows, uplink_bps, order, available, waits);
  return available;
}

std::vector<TimePs> uplink_waits(const std::vector<SenderFlow>& flows, double uplink_bps) {
  std::vector<std::size_t> order;
  std::vector<double> available;
  std::vector<TimePs> waits;
  uplink_shares(flows, uplink_bps, order, available, waits);
  return waits;
}

void uplink_shares(const std::vector<SenderFlow>& flows, double uplink_bps,
                   std::vector<std::size_t>& order, std::vector<double>& available,
                   std::vector<TimePs>& waits, const UplinkShareOptions& options) {
  service_order(flows, order, options.urgent_by_deadline);
  available.assign(flows.size(), 0.0);
  waits.assign(flows.size(), 0);
  double used_bps = 0;
  double ahead_bytes = 0;
  for (const std::size_t i : order) {
    available[i] = std::max(0.0, uplink_bps - used_bps);
    used_bps += flows[i].granted_bps;
    waits[i] = transfer_ps(ahead_bytes, uplink_bps);
    if (flows[i].granted_bps > 0) ahead_bytes += static_cast<double>(flows[i].remaining_bytes);
  }
}

}  // namespace safs::core
