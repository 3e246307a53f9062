#include "runtime/endpoint_config.h"

namespace safs::runtime {

// The core's defaults are sized for a 100 Gbit/s fabric with microsecond
// RTTs. On real hosts the control loop runs on a 1 ms epoll tick and a new
// pacing rate acts within 1-3 ms (docs/runtime.md, "Data path"), so the timescales here are
// milliseconds.
core::ReceiverConfig EndpointConfig::default_scheduler_config() {
  constexpr TimePs kMs = kPsPerMs;
  core::ReceiverConfig config;
  config.allocator.rtt_ps = kMs;  // kernel TCP with delayed ACKs and a 1 ms loop
  // One control delay + one RTT + one tick of pacing granularity.
  config.allocator.demand.headroom_ps = 3 * kMs;
  config.allocator.demand.min_window_ps = kMs;
  config.grants.control_delay_ps = 2 * kMs;  // grant sent, read, applied: a tick each side
  // Long leases: decreases are sent explicitly, so the lease only bounds how
  // long a vanished receiver's rate survives; refreshes cost one message each.
  config.grants.validity_ps = 200 * kMs;
  config.grants.refresh_margin_ps = 50 * kMs;
  config.grants.cap_slack_bytes = 1 << 20;  // a send buffer's worth beyond rate x lease
  config.reallocate_every_ps = 5 * kMs;
  config.unscheduled_window_ps = 10 * kMs;
  config.starvation_window_ps = 1000 * kMs;
  // A plan is granted this long before its start: the grant is sent, read
  // and applied within a tick each side (control_delay_ps), and a producer
  // may finish a few ms early.
  config.announce_lead_ps = 5 * kMs;
  return config;
}

}  // namespace safs::runtime
