// A sender's side of safety: several receivers may each grant it a rate, and
// together they can ask more of its uplink than it can carry. The sender then
// serves its flows in slack order (urgent before background, least slack
// first) and tells each receiver what the flow actually gets, so the receiver
// can hand the difference to someone else.
#pragma once

#include <cstdint>
#include <vector>

#include "core/types.h"

namespace safs::core {

struct SenderFlow {
  FlowId id = 0;
  double granted_bps = 0;
  bool urgent = false;
  TimePs slack_ps = kTimeNever;  // from the flow's own timestamp; kTimeNever for background
  std::uint64_t remaining_bytes = 0;
  TimePs no_bubble_ps =
      kTimeNever;  // urgent: its timestamp (UplinkShareOptions::urgent_by_deadline)
};

// How a sender orders the flows its uplink serves.
struct UplinkShareOptions {
  // Urgent flows by no-bubble timestamp (EDF), not by slack (least slack
  // first). Slack rises as a served flow drains and falls as a waiting one
  // waits, so two flows swap places every few report horizons, and each swap
  // is a report to each of their receivers and a grant back. Timestamps do
  // not move as data drains: a receiver's grant stays an upper bound that
  // the sender's shares move only when flows come, go or are granted anew
  // (tests/core/uplink_convergence_test.cc; docs/safs.md, "Coordinated
  // senders").
  bool urgent_by_deadline = false;
};

// One granted flow as its sender's uplink sees it. An urgent flow with a
// no-bubble timestamp is ordered by its slack at the full uplink (and, with
// UplinkShareOptions::urgent_by_deadline, by the timestamp); background, and
// an urgent flow without one, by its remaining transfer time, i.e. shortest
// remaining first. Both faces describe their flows with this.
SenderFlow sender_flow(FlowId id, double granted_bps, bool urgent, TimePs no_bubble_ps,
                       std::uint64_t remaining_bytes, double uplink_bps, TimePs now);

// Bytes a flow sends before any grant: its blind budget (about one BDP of
// its path), or all of it when it is at most `whole_flow_budgets` budgets
// long. A short flow's granted rest would queue in its host's NIC behind
// the blind bytes of the flows started after it, which go at a higher
// priority: on a host that starts many at once (a one-to-many combine), each
// would end after all of their blind parts (docs/safs.md, "Sender side").
std::uint64_t blind_bytes(std::uint64_t flow_bytes, double budget_bytes, double whole_flow_budgets);

// The rate each flow can achieve, in the input order; the total never exceeds
// uplink_bps and no flow gets more than its grant.
std::vector<double> achievable_rates(const std::vector<SenderFlow>& flows, double uplink_bps);

// The most each flow could get if it asked for more: the uplink less what the
// flows served before it were granted (never negative). This is what a sender
// reports; it does not depend on the flow's own grant, so reporting it cannot
// make grants and reports chase each other.
std::vector<double> available_rates(const std::vector<SenderFlow>& flows, double uplink_bps);

// How long each flow waits for the granted flows served before it to finish
// at the full uplink. A limit that ends sooner than a receiver can act on a
// report (a report, a reallocation, a grant) is not worth reporting: the
// receiver would pause the flow and grant it again, one round trip after the
// uplink could have served it.
std::vector<TimePs> uplink_waits(const std::vector<SenderFlow>& flows, double uplink_bps);

// available_rates and uplink_waits together, into `available` and `waits`
// (resized to the flows), with `order` as working memory: a sender that
// rebalances on every grant keeps the three and allocates nothing per call.
void uplink_shares(const std::vector<SenderFlow>& flows, double uplink_bps,
                   std::vector<std::size_t>& order, std::vector<double>& available,
                   std::vector<TimePs>& waits, const UplinkShareOptions& options = {});

}  // namespace safs::core
