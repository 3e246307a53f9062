// A sender's side of safety: several receivers may each grant it a rate, and
// together they can ask more of its uplink than it can carry. The sender then
// serves its flows in slack order (urgent before background, least slack
// first) and tells each receiver what the flow actually gets, so the receiver
// can hand the difference to someone else.
#pragma once

#include <vector>

#include "core/types.h"

namespace safs::core {

struct SenderFlow {
  FlowId id = 0;
  double granted_bps = 0;
  bool urgent = false;
  TimePs slack_ps = kTimeNever;  // from the flow's own timestamp; kTimeNever for background
};

// The rate each flow can achieve, in the input order; the total never exceeds
// uplink_bps and no flow gets more than its grant.
std::vector<double> achievable_rates(const std::vector<SenderFlow>& flows, double uplink_bps);

// The most each flow could get if it asked for more: the uplink less what the
// flows served before it were granted (never negative). This is what a sender
// reports; it does not depend on the flow's own grant, so reporting it cannot
// make grants and reports chase each other.
std::vector<double> available_rates(const std::vector<SenderFlow>& flows, double uplink_bps);

}  // namespace safs::core
