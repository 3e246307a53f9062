// Whether pacing costs a sender's flows to one receiver more than it protects.
//
// Pacing holds a flow to its grant so that the receiver's senders together
// fit its downlink. When something the receiver does not schedule (another
// application's bulk TCP flow) fills the bottleneck's queue, the flows get
// less than their grants, and pacing then only costs them: a paced TCP flow
// loses throughput to unpaced ones in a shared drop-tail queue (Aggarwal,
// Savage and Anderson, "Understanding the performance of TCP pacing",
// INFOCOM 2000). docs/real-pipeline.md measures what it costs next to an
// unmanaged bulk flow, and what this fallback gives back.
//
// The path to a receiver is contended after `windows` windows in a row in
// which its granted, backlogged flows delivered less than `shortfall_ratio`
// of what their grants allowed while their connections retransmitted or
// found a queue (smoothed RTT at least `queue_delay_ns` above the lowest):
// paced below the bottleneck's rate, SAFS's own flows build neither for
// long, so someone else's traffic does. A slow reader or writer shows a
// shortfall with neither, and pacing costs nothing there. The path's flows
// then go unpaced (TCP's congestion control alone) and do not wait for a
// first grant. It stops being contended at the end of the first window in
// which they deliver `recovered_ratio` of what their grants allow without
// loss or a queue (the capacity is back: behind the competitor's queue a
// flow's last few kB, or a grant below TCP's share, are reached too), or
// after `memory_ns` without a window that could tell. A path whose own
// unpaced flows keep a queue stays contended; GrantReached still paces
// each of them at its grant once it gets it.
// Each flow is also checked on its own (GrantReached): one that delivered
// that much of its own grant in its last half window is paced again, so
// that no flow runs above its grant for more than about one window, however
// the path's total goes: less than the receiver's overrun check takes to
// demote a sender (EnforcementConfig: three 10 ms windows above 1.5 times
// the grant; the endpoint refuses a window that is not shorter than its own
// enforcement's horizon, and assumes its receivers enforce the same).
#pragma once

#include <array>
#include <cstdint>

namespace safs::runtime {

// What a path's granted, backlogged flows delivered against what their
// grants allowed, per judged window (one whose grants allowed at least
// ContentionFallback::min_allowed_bytes), paced or not, fallback on or off:
// how an operator sees that something else shares the bottleneck.
struct GrantDelivery {
  // Windows by delivered / allowed: at most 0.1, 0.2, ..., 1.0, then above.
  static constexpr std::size_t kBuckets = 11;
  std::array<std::uint64_t, kBuckets> windows{};
  std::uint64_t lossy_windows = 0;   // with a retransmission
  std::uint64_t queued_windows = 0;  // smoothed RTT queue_delay_ns or more above the lowest
  std::int64_t max_queue_delay_ns = 0;

  static std::size_t bucket(double delivered_bytes, double allowed_bytes);
  GrantDelivery& operator+=(const GrantDelivery& other);
};

struct ContentionFallback {
  // Off, paths are still measured (GrantDelivery) but never found contended.
  bool enabled = true;
  // A few round trips through a loaded bottleneck's queue; below the overrun
  // check's EnforcementConfig::window_ns x windows.
  std::int64_t window_ns = 20'000'000;
  // Short, congested windows in a row before the path counts as contended
  // (as core::DownlinkEstimatorConfig's): one lost segment or one slow start
  // is not a competitor.
  int windows = 2;
  double shortfall_ratio = 0.85;  // as core::DownlinkEstimatorConfig's
  // Flows that deliver this much of their grants get them: kernel pacing
  // holds a flow within a few percent of its rate (docs/runtime.md, "Data
  // path": 49.8 MB/s for 50).
  double recovered_ratio = 0.95;
  // Queueing that SAFS's paced flows would not build: a few of its 1 ms ticks.
  std::int64_t queue_delay_ns = 5'000'000;
  // A window whose grants allowed less than this cannot make a path
  // contended (a flow's tail, or a trickle: one 64 KB TSO burst more or less
  // would decide it).
  std::uint64_t min_allowed_bytes = 256 * 1024;
  // How long a contended path stays so without a window that could tell (no
  // granted flow backlogged). A competitor's bulk flow lasts seconds to
  // minutes, and a pipeline's bursts of transfers can be 10-20 s apart
  // behind its queue (GPipe's phases next to a Cubic bulk flow:
  // docs/real-pipeline.md); forgotten in between, each burst would start
  // paced, each flow on a connection of its own. A path still marked
  // contended after the competitor left costs one window: its flows then
  // deliver their grants without a queue, which clears it.
  std::int64_t memory_ns = 60'000'000'000;
  // A flow that starts on a contended path takes a data connection that was
  // never kernel-paced (opening one if the pool has none) and paces in user
  // space if at all: one once given a kernel pacing rate stays paced by TCP
  // at its own rate (pacer.h), which loses to an unpaced competitor in the
  // shared queue. Only with PacingMode::kAuto. docs/real-pipeline.md
  // measures it next to an unmanaged bulk flow.
  bool unpaced_connections = true;
  // A flow that starts on a contended path while another flow to the same
  // receiver, due no later, is still writing on a connection that stays
  // unpaced waits for that flow's last byte and follows it on the same
  // connection (announced then; several waiting go in deadline order), as
  // gloo's one connection per pair of ranks carries tensor after tensor; one
  // that starts while a flow there has written everything and awaits its
  // DONE takes its connection at once.
  // Behind the competitor's full queue a new connection starts from TCP's
  // initial window and doubles it once per round trip of that queue; the
  // one in use has opened its window already. A flow on a plan never waits
  // (its plan would lapse). Only with unpaced_connections and
  // EndpointConfig::data_reuse (docs/runtime.md, "Contention fallback").
  bool one_connection = true;
  // For risk (SendSide::check_risk): an unpaced flow without three windows
  // of its own delivery yet is projected at what the path's last unpaced
  // flow got in this contention episode (PathContention); false, it has no
  // projection until then. docs/real-pipeline.md, "Sends reported at risk".
  bool judge_by_path_rate = true;
};

class PathContention {
 public:
  explicit PathContention(const ContentionFallback& config) : config_(config) {}

  // One of the path's granted flows with bytes still to deliver, since the
  // last call: what its grant allowed (rate times time), what TCP delivered
  // of it (acknowledged bytes), retransmitted, and how long its packets
  // queue (tcp_progress.h).
  void add(double allowed_bytes, std::uint64_t delivered_bytes, std::uint32_t retransmits,
           std::int64_t queue_delay_ns, std::int64_t now_ns);
  bool contended(std::int64_t now_ns) const;
  std::uint64_t episodes() const { return episodes_; }
  // What TCP last delivered to an unpaced flow on this path in this
  // contention episode (the flow's own two-window measurement), to judge a
  // new flow by before it has one of its own; 0: none yet.
  void note_unpaced_delivery(double bps) { unpaced_delivery_bps_ = bps; }
  double unpaced_delivery_bps() const { return unpaced_delivery_bps_; }
  const GrantDelivery& delivery() const { return delivery_; }

 private:
  void close_window_if_due(std::int64_t now_ns);

  ContentionFallback config_;
  std::int64_t window_start_ns_ = -1;
  double allowed_bytes_ = 0;
  std::uint64_t delivered_bytes_ = 0;
  std::uint64_t retransmits_ = 0;
  std::int64_t max_queue_delay_ns_ = 0;
  int short_windows_ = 0;  // short and congested, in a row
  bool contended_ = false;
  std::int64_t last_evidence_ns_ = 0;
  std::uint64_t episodes_ = 0;
  double unpaced_delivery_bps_ = 0;
  GrantDelivery delivery_;
};

// One flow's own check on a contended path: whether, in its last window
// (half the path's), TCP delivered `recovered_ratio` of what its grant
// allowed. Such a flow is paced again for the next window.
class GrantReached {
 public:
  GrantReached() = default;
  GrantReached(const ContentionFallback& config, std::int64_t now_ns)
      : window_ns_(config.window_ns / 2),
        recovered_ratio_(config.recovered_ratio),
        window_start_ns_(now_ns) {}

  void add(double allowed_bytes, std::uint64_t delivered_bytes, std::int64_t now_ns);
  bool reached() const { return reached_; }

 private:
  std::int64_t window_ns_ = 10'000'000;
  double recovered_ratio_ = 0.95;
  std::int64_t window_start_ns_ = 0;
  double allowed_bytes_ = 0;
  std::uint64_t delivered_bytes_ = 0;
  bool reached_ = false;
};

}  // namespace safs::runtime
