// The options of the least-laxity-first baseline (dctcp-llf) and its
// [transport.dctcp-llf] knobs: DCTCP's, plus the ladder of laxity thresholds
// that picks each urgent packet's priority level. Defaults are the member
// initializers.
#pragma once

#include <cstdint>

#include "base/time.h"
#include "options/knob.h"
#include "transport/window/window_options.h"

namespace safs {

// Urgent flows spread over `levels` priority levels, from the window's
// urgent_priority down. A flow is at the top level while its laxity is below
// first_threshold_rtts base RTTs, and one level lower past each threshold,
// each threshold_growth times the previous (1, 4, 16, 64, 256 RTTs by
// default), so it climbs a level each time its slack shrinks by that factor.
struct LaxityLevels {
  std::uint32_t levels = 6;  // 6 .. 1 under urgent_priority 6: every level above background
  double first_threshold_rtts = 1;
  double threshold_growth = 4;
};

// The level of an urgent flow with `laxity_ps` of slack on a path whose
// unloaded RTT is `rtt_ps`; kTimeNever (no deadline) gets the lowest.
std::uint8_t laxity_level(const LaxityLevels& ladder, std::uint8_t top_level, TimePs laxity_ps,
                          TimePs rtt_ps);

struct DctcpLlfOptions {
  // Urgent flows' top level, and their ACKs' level: the -prio class.
  DctcpOptions dctcp{.window = {.urgent_priority = kUrgentClassPriority}};
  LaxityLevels laxity;
};

KnobTable<DctcpLlfOptions> dctcp_llf_knobs();

}  // namespace safs
