// The share of a receiver's downlink its managed flows can actually get when
// unmanaged traffic (another application's bulk TCP flow) shares the
// bottleneck. The receiver sees only its own flows, so it infers the rest:
// when its backlogged flows together receive clearly less than it granted
// them, the difference went to someone else, and the budget it allocates
// from comes down to what they did receive; when they receive what they are
// granted again, the budget probes back up. Pure: time and byte counts are
// passed in.
//
// Windowed, not per tick: one window's bytes over its length. A tick (1 ms in
// the runtime) sees one or two TSO packets of 64 KB or none, so per-tick
// rates swing between 0 and several times the grant; a 50 ms window holds
// tens of packets at the rates of interest (10 MB/s and up), and an EWMA over
// windows (decrease_gain) smooths what is left. Decreases follow the measured
// rate (multiplicative, like TCP's response to loss); increases are additive
// probes, so the budget does not oscillate by the whole unmanaged share.
#pragma once

#include <cstdint>
#include <optional>

#include "core/types.h"

namespace safs::core {

struct DownlinkEstimatorConfig {
  // See above: tens of 64 KB packets per window at 10 MB/s and more, and
  // several 5 ms reallocations of the runtime's scheduler per window.
  TimePs window_ps = 50 * kPsPerMs;
  // Achieved below this fraction of granted is a shortfall. Kernel pacing
  // holds a flow within a few percent of its rate (49.8 of 50 MB/s measured:
  // docs/runtime.md, "Data path"), so 15% below is not pacing error.
  double shortfall_ratio = 0.85;
  // Consecutive shortfall windows before the budget comes down. Measured on
  // the loaded 2-vCPU test machine without any competitor: single 50 ms
  // windows at 0.2-0.6 of the grant, followed by one at 1.3 (the receiver's
  // loop was late, the bytes came in the next window); a competitor's
  // shortfall persists, so two windows (100 ms) tell them apart.
  int shortfall_windows = 2;
  // At or above this fraction the flows got their grants: probe upward.
  double recovered_ratio = 0.95;
  // Weight of the achieved rate (over the shortfall windows) in the new
  // budget: half the gap closes each time, so a real change is mostly
  // followed (87%) within three decreases and a noisy one moves it half way.
  double decrease_gain = 0.5;
  // A recovered window raises the budget by this fraction of the link: from
  // the floor back to the whole link in 18 windows (0.9 s). Slow enough that
  // an unmanaged flow still present shows up again as a shortfall before the
  // budget overshoots far.
  double probe_fraction = 0.05;
  // The budget never drops below this fraction of the link: the managed
  // flows keep a rate to measure with (and TCP's fairness gives even a
  // single flow next to a bulk flow far more than 10%).
  double floor_fraction = 0.1;
  // A window in which the downlink carried at least this fraction of
  // link_bps (all traffic: observe_link_total) found it busy. Above the
  // shortfall ratio times the 0.97 a receiver grants (AllocatorConfig's
  // usable_fraction), so flows that fall short on their own never make it
  // busy.
  double busy_ratio = 0.9;
};

class DownlinkEstimator {
 public:
  DownlinkEstimator(double link_bps, const DownlinkEstimatorConfig& config = {});

  // Called as time passes (each tick): `bytes` received by the backlogged
  // managed flows since the last call, `granted_bps` the total rate granted to
  // them in force over that time, and whether they were backlogged (had bytes
  // left beyond what their grants would carry to the window's end). A window
  // with any non-backlogged stretch says nothing about capacity (an
  // application-limited flow does not send its grant) and leaves the budget
  // alone. True when the budget changed.
  bool observe(TimePs now, std::uint64_t bytes, double granted_bps, bool backlogged);
  // Whether the call of observe() at `now` will close a window.
  bool window_due(TimePs now) const {
    return started_ && now > last_ps_ && now - window_start_ps_ >= config_.window_ps;
  }
  // Everything the downlink has carried so far (the receiving interface's
  // counter: managed and unmanaged traffic), read when window_due() and
  // passed before that observe(). A window whose start and end both were
  // read is judged busy or not; any other is not busy.
  void observe_link_total(std::uint64_t total_bytes) { link_total_now_ = total_bytes; }

  double budget_bps() const { return budget_bps_; }
  double link_bps() const { return link_bps_; }
  // What the unmanaged traffic is estimated to take.
  double unmanaged_bps() const { return link_bps_ - budget_bps_; }
  double floor_bps() const { return config_.floor_fraction * link_bps_; }
  // The last judged window's achieved / granted (1 before any).
  double last_ratio() const { return last_ratio_; }
  // The flows fell short of their grants for shortfall_windows judged
  // windows in a row, and no judged window since gave them recovered_ratio.
  bool short_of_grants() const { return short_of_grants_; }
  // The last window carried busy_ratio of link_bps or more (false without
  // observe_link_total): a shortfall then went to someone else's traffic,
  // not to senders that cannot go faster.
  bool link_busy() const { return link_busy_; }

 private:
  void start_window(TimePs now);

  DownlinkEstimatorConfig config_;
  double link_bps_;
  double budget_bps_;
  bool started_ = false;
  TimePs window_start_ps_ = 0;
  TimePs last_ps_ = 0;
  double granted_bits_ = 0;  // integral of the granted rate over the window
  std::uint64_t bytes_ = 0;
  bool backlogged_ = true;  // throughout the window so far
  double last_ratio_ = 1;
  bool short_of_grants_ = false;
  std::optional<std::uint64_t> link_total_at_start_;  // read when this window began
  std::optional<std::uint64_t> link_total_now_;       // read for this window's end
  bool link_busy_ = false;
  int shortfalls_ = 0;         // consecutive shortfall windows
  double shortfall_bits_ = 0;  // achieved over them
  double shortfall_seconds_ = 0;
};

}  // namespace safs::core
