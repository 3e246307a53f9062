// Whether pacing costs a sender's flows to one receiver more than it protects.
//
// Pacing holds a flow to its grant so that the receiver's senders together
// fit its downlink. When something the receiver does not schedule (another
// application's bulk TCP flow) fills the bottleneck's queue, the flows lose
// packets and get less than their grants, and pacing then only costs them:
// a paced TCP flow loses throughput to unpaced ones in a shared drop-tail
// queue (Aggarwal, Savage and Anderson, "Understanding the performance of
// TCP pacing", INFOCOM 2000). Measured on the namespace testbed next to an
// unmanaged bulk flow, the pipeline's paced transfers left each stage about
// 40% more bubble than the same transfers unpaced (docs/runtime.md,
// "Contention fallback").
//
// The path to a receiver is contended once, in one window, its paced,
// backlogged flows delivered less than `shortfall_ratio` of what their
// grants allowed while their connections retransmitted or found a queue
// (smoothed RTT at least `queue_delay_ns` above the lowest): paced below the
// bottleneck's rate, SAFS's own flows build neither, so someone else fills
// it. A slow reader or writer shows a shortfall without either, and pacing
// costs nothing there. The path's flows then go unpaced
// (TCP's own congestion control alone) and do not wait for a first grant.
// It stops being contended at the end of the first window in which they
// deliver all their grants allow (the capacity is back: pacing matters
// again), or after `memory_ns` without a window that could tell. Until then
// a flow may run above its grant; the window is shorter than the time the
// receiver's overrun check takes to demote a sender (EnforcementConfig:
// three 10 ms windows above 1.5 times the grant), and the endpoint refuses a
// configuration where it is not.
#pragma once

#include <cstdint>

namespace safs::runtime {

struct ContentionFallback {
  bool enabled = true;
  // A few round trips through a loaded bottleneck's queue; below the overrun
  // check's EnforcementConfig::window_ns x windows.
  std::int64_t window_ns = 20'000'000;
  double shortfall_ratio = 0.85;  // as core::DownlinkEstimatorConfig's
  // Queueing that SAFS's paced flows would not build: a few of its 1 ms ticks.
  std::int64_t queue_delay_ns = 5'000'000;
  // A window whose grants allowed less than this says nothing (a flow's tail,
  // or a trickle): one 64 KB TSO burst more or less would decide it.
  std::uint64_t min_allowed_bytes = 256 * 1024;
  std::int64_t memory_ns = 2'000'000'000;
};

class PathContention {
 public:
  explicit PathContention(const ContentionFallback& config) : config_(config) {}

  // What one of the path's paced, backlogged flows was allowed since the
  // last call (its grant's rate times the time), retransmitted, and the time
  // its packets queue (tcp_progress.h).
  void add_allowed(double allowed_bytes, std::uint32_t retransmits, std::int64_t queue_delay_ns,
                   std::int64_t now_ns);
  // Bytes TCP delivered for the path's flows since the last call.
  void add_written(std::uint64_t bytes, std::int64_t now_ns);
  bool contended(std::int64_t now_ns) const;
  std::uint64_t episodes() const { return episodes_; }

 private:
  void close_window_if_due(std::int64_t now_ns);

  ContentionFallback config_;
  std::int64_t window_start_ns_ = -1;
  double allowed_bytes_ = 0;
  std::uint64_t written_bytes_ = 0;
  std::uint64_t retransmits_ = 0;
  std::int64_t max_queue_delay_ns_ = 0;
  bool contended_ = false;
  std::int64_t last_evidence_ns_ = 0;
  std::uint64_t episodes_ = 0;
};

}  // namespace safs::runtime
