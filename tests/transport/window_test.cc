// The window transport's Linux mechanisms: PRR's arithmetic (RFC 6937),
// slow start that the one-segment-at-a-time NIC does not stall (RFC 7661 as
// Linux tests it), and each recovery knob switching its mechanism.
#include <gtest/gtest.h>

#include "support/experiments.h"
#include "transport/window/prr.h"

namespace safs {
namespace {

constexpr std::uint32_t kMss = 4096;

// Above ssthresh, PRR sends ssthresh / prior_cwnd of what is delivered: over
// a round that delivers the old window, the window reaches ssthresh.
TEST(Prr, ReducesToSsthreshOverOneRound) {
  const std::uint64_t prior = 20 * kMss, ssthresh = 10 * kMss;
  PrrState prr;
  prr_start(prr, prior);
  std::uint64_t pipe = prior, cwnd = prior, sent = 0;
  for (int ack = 0; ack < 20; ++ack) {
    pipe -= kMss;  // one segment delivered
    cwnd = prr_cwnd(prr, cwnd, pipe, ssthresh, kMss, true, kMss);
    while (pipe + kMss <= cwnd) {  // the sender fills the window
      pipe += kMss;
      sent += kMss;
      prr.out_bytes += kMss;
    }
    EXPECT_LE(prr.out_bytes, (ssthresh * prr.delivered_bytes + prior - 1) / prior + kMss);
  }
  EXPECT_EQ(sent, ssthresh);
  EXPECT_EQ(pipe, ssthresh);
}

TEST(Prr, FirstAckOfAReductionSendsOneSegment) {
  PrrState prr;
  prr_start(prr, 20 * kMss);
  // ssthresh 1/4 of the window: the proportional share of one segment is
  // a quarter, but the first ACK still lets the retransmission out.
  const std::uint64_t cwnd = prr_cwnd(prr, 20 * kMss, 19 * kMss, 5 * kMss, kMss, false, kMss);
  EXPECT_EQ(cwnd, 20 * kMss);
  prr.out_bytes += kMss;
  // The next ACK's share (2 x 1/4 segment, less the one sent) is nothing.
  EXPECT_EQ(prr_cwnd(prr, cwnd, 19 * kMss, 5 * kMss, kMss, false, kMss), 19 * kMss);
}

// At or below ssthresh (the pipe drained by losses), PRR-SSRB slow-starts
// back: at most what was delivered and not yet resent, plus one segment.
TEST(Prr, BelowSsthreshGrowsByDeliveredPlusOne) {
  PrrState prr;
  prr_start(prr, 20 * kMss);
  prr.out_bytes = 1;  // past the first ACK
  prr.delivered_bytes = 0;
  const std::uint64_t cwnd = prr_cwnd(prr, 0, 2 * kMss, 10 * kMss, kMss, true, kMss);
  EXPECT_EQ(cwnd, 2 * kMss + 2 * kMss);
  // Without the slow-start bonus (a partial ACK marking a new hole): delivered only.
  PrrState lossy = prr;
  lossy.delivered_bytes = 0;
  EXPECT_EQ(prr_cwnd(lossy, 0, 2 * kMss, 10 * kMss, kMss, false, kMss), 3 * kMss);
  // Never above ssthresh.
  EXPECT_EQ(prr_cwnd(lossy, 0, 9 * kMss, 10 * kMss, 4 * kMss, true, kMss), 10 * kMss);
}

TimePs last_finish(Experiment& e) {
  TimePs last = 0;
  for (const FlowRecord& r : e.recorder().records()) last = std::max(last, r.finish_ps);
  return last;
}

// A lone flow at 400 Gbit/s: the NIC pulls one segment at a time, so a test
// of "is the window the limit" that counted only pulled segments stalled slow
// start (8 RTTs late here). Slow start from 10 segments to the path's BDP
// (about 36 segments) takes two RTTs more than a window that needs no growth.
TEST(WindowSlowStart, LoneFlowAtLineRateIsNotStalledByTheNic) {
  auto run = [](std::int64_t initial_cwnd_packets) {
    ExperimentConfig config = testing::star(2);
    config.topology.host_link.rate_bps = 400'000'000'000;
    config.transport = "reno";
    config.transport_params["initial_cwnd_packets"] = initial_cwnd_packets;
    testing::add_flow(config, 1, 0, 8u << 20);
    Experiment e(config);
    e.run();
    EXPECT_TRUE(e.recorder().all_complete());
    return last_finish(e);
  };
  ExperimentConfig probe = testing::star(2);
  probe.topology.host_link.rate_bps = 400'000'000'000;
  Experiment e(probe);
  const Route data = e.network().route(1, 0, 0), ack = e.network().route(0, 1, 0);
  const TimePs rtt = data.packet_latency_ps(4096 + 78) + ack.packet_latency_ps(78);

  const TimePs unlimited = run(4000);
  const TimePs slow_start = run(10);
  EXPECT_GT(slow_start, unlimited);
  EXPECT_LE(slow_start - unlimited, 3 * rtt);
}

// Each recovery knob off gives the classic mechanism back, and the run
// differs: the knobs reach the sender. Every byte still arrives.
TEST(WindowKnobs, EachRecoveryKnobChangesALossyIncast) {
  auto run = [](const char* knob, bool value) {
    ExperimentConfig config = testing::star(17);
    config.network.switches.port_buffer_bytes = 150'000;
    config.transport = "dctcp";
    if (knob != nullptr) config.transport_params[knob] = value;
    for (int s = 1; s <= 16; ++s) testing::add_flow(config, s, 0, 512u << 10);
    Experiment e(config);
    e.run();
    EXPECT_TRUE(e.recorder().all_complete()) << (knob ? knob : "defaults");
    EXPECT_GT(e.network_totals().queue_drops, 0u);
    return std::pair{last_finish(e), e.transport().stats().retransmissions};
  };
  const auto linux_like = run(nullptr, true);
  EXPECT_EQ(run("prr", true), linux_like);  // the default is on
  for (const char* knob : {"prr", "impatient_rto", "loss_state"}) {
    EXPECT_NE(run(knob, false), linux_like) << knob;
  }
}

}  // namespace
}  // namespace safs
