#include "core/demand.h"

#include <algorithm>

namespace safs::core {

namespace {
// time_left - transfer time, saturating (a zero line rate takes forever).
TimePs slack_of(TimePs time_left, double remaining, double line_bps) {
  const TimePs transfer = transfer_ps(remaining, line_bps);
  if (transfer == kTimeNever) return -kTimeNever;
  return time_left - transfer;
}
}  // namespace

Demand no_bubble_demand(const SemanticFlow& flow, TimePs now, double line_bps,
                        const DemandConfig& config) {
  Demand d;
  if (!flow.urgent() || flow.remaining_bytes == 0) return d;
  const auto remaining = static_cast<double>(flow.remaining_bytes);
  const TimePs time_left =
      flow.no_bubble_ps == kTimeNever ? kTimeNever : flow.no_bubble_ps - now - config.headroom_ps;
  if (time_left == kTimeNever) return d;
  if (time_left <= config.min_window_ps) {
    d.overdue = true;
    d.rate_bps = line_bps;
    d.slack_ps = slack_of(time_left, remaining, line_bps);
    return d;
  }
  d.rate_bps = std::min(line_bps, config.margin * rate_for(remaining, time_left));
  d.slack_ps = slack_of(time_left, remaining, line_bps);
  return d;
}

}  // namespace safs::core
