// No-bubble rate demand: the rate that lands a flow's remaining bytes by its
// no-bubble timestamp, less a headroom for what the rate cannot control.
#pragma once

#include "core/semantic_flow.h"

namespace safs::core {

struct DemandConfig {
  // Subtracted from the time left: one control delay (the grant must reach
  // the sender), one RTT (the last byte's flight and ACK clocking) and one
  // MTU at line rate, plus a small epsilon. background.md §5.2.
  TimePs headroom_ps = 10 * kPsPerUs;
  double margin = 1.1;              // beta: ask for 10% more than the bare rate
  TimePs min_window_ps = kPsPerUs;  // tau_min: never divide by less than this
};

struct Demand {
  double rate_bps = 0;
  TimePs slack_ps = kTimeNever;  // time the flow can still wait and finish at line rate
  bool overdue = false;          // the timestamp (less headroom) has passed
};

// `line_bps` is the most the flow could get: min(receiver link, sender cap).
Demand no_bubble_demand(const SemanticFlow& flow, TimePs now, double line_bps,
                        const DemandConfig& config);

}  // namespace safs::core
