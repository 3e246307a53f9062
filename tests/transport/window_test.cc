// The window transport's Linux mechanisms: PRR's arithmetic (RFC 6937),
// slow start that the one-segment-at-a-time NIC does not stall (RFC 7661 as
// Linux tests it), and each recovery knob switching its mechanism.
#include <gtest/gtest.h>

#include "support/experiments.h"
#include "transport/registry.h"
#include "transport/window/prr.h"
#include "transport/window/sack_scoreboard.h"

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

// RFC 6675 IsLost(): a hole is lost once dupthresh segments above it are
// SACKed; it is resent once, and acknowledging it clears the board.
TEST(SackScoreboard, MarksAHoleLostAfterThreeSacksAbove) {
  SackScoreboard board(kMss, 100 * kMss);
  for (std::uint64_t seg = 0; seg < 6; ++seg) board.reserve(seg * kMss);
  EXPECT_EQ(board.sack(2 * kMss, 3), kMss);  // segments 0 and 1 missing
  EXPECT_EQ(board.sack(3 * kMss, 3), kMss);
  EXPECT_FALSE(board.has_hole_to_resend());
  EXPECT_EQ(board.sack(4 * kMss, 3), kMss);
  EXPECT_EQ(board.sack(4 * kMss, 3), 0u);  // a repeat reports nothing new
  ASSERT_TRUE(board.has_hole_to_resend());
  EXPECT_EQ(board.hole_to_resend(), 0u);
  EXPECT_EQ(board.lost_bytes(), 2 * kMss);
  EXPECT_EQ(board.sacked_bytes(), 3 * kMss);
  board.retransmitted(0);
  EXPECT_EQ(board.hole_to_resend(), kMss);
  board.retransmitted(kMss);
  EXPECT_FALSE(board.has_hole_to_resend());
  EXPECT_EQ(board.retransmitted_bytes(), 2 * kMss);
  board.advance(5 * kMss);
  EXPECT_EQ(board.sacked_bytes() + board.lost_bytes() + board.retransmitted_bytes(), 0u);
}

// The ring grows with the window and keeps its marks across the growth.
TEST(SackScoreboard, KeepsMarksWhenTheWindowGrows) {
  SackScoreboard board(kMss, 10'000 * kMss);
  board.reserve(0);
  board.sack(0 + 5 * kMss, 3);  // beyond what is reserved: ignored
  EXPECT_EQ(board.sacked_bytes(), 0u);
  for (std::uint64_t seg = 1; seg < 1000; ++seg) board.reserve(seg * kMss);
  board.sack(10 * kMss, 3);
  for (std::uint64_t seg = 1000; seg < 5000; ++seg) board.reserve(seg * kMss);
  board.sack(11 * kMss, 3);
  board.sack(12 * kMss, 3);
  EXPECT_EQ(board.sacked_bytes(), 3 * kMss);
  EXPECT_EQ(board.lost_bytes(), 10 * kMss);  // segments 0 .. 9
  board.advance(13 * kMss);
  EXPECT_EQ(board.sacked_bytes(), 0u);
  EXPECT_EQ(board.lost_bytes(), 0u);
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
// differs: the knobs reach the sender. Every byte still arrives. The
// timeout knobs show without SACK, where partial ACKs follow a timeout.
TEST(WindowKnobs, EachRecoveryKnobChangesALossyIncast) {
  auto run = [](std::vector<std::pair<const char*, bool>> knobs) {
    ExperimentConfig config = testing::star(17);
    config.network.switches.port_buffer_bytes = 150'000;
    config.transport = "dctcp";
    for (const auto& [knob, value] : knobs) config.transport_params[knob] = value;
    for (int s = 1; s <= 16; ++s) testing::add_flow(config, s, 0, 512u << 10);
    Experiment e(config);
    e.run();
    EXPECT_TRUE(e.recorder().all_complete()) << knobs.size();
    EXPECT_GT(e.network_totals().queue_drops, 0u);
    return std::pair{last_finish(e), e.transport().stats().retransmissions};
  };
  const auto linux_like = run({});
  EXPECT_EQ(run({{"prr", true}, {"sack", true}}), linux_like);  // the defaults, as Linux
  EXPECT_NE(run({{"prr", false}}), linux_like);
  const auto new_reno = run({{"sack", false}});
  EXPECT_NE(new_reno, linux_like);
  for (const char* knob : {"impatient_rto", "loss_state"}) {
    EXPECT_NE(run({{"sack", false}, {knob, false}}), new_reno) << knob;
  }
}

}  // namespace
}  // namespace safs

namespace safs {
namespace {

// SACK recovery delivers every byte under random loss of data and ACKs (a
// lost ACK loses its SACK block too), with flow sizes around the MTU.
// After a timeout every segment not SACKed is lost and resent once more,
// from the lowest, and what was SACKed stays (Linux tcp_timeout_mark_lost).
TEST(SackScoreboard, TimeoutMarksWhatIsNotSackedLost) {
  constexpr std::uint32_t kSegment = 1000;
  SackScoreboard board(kSegment, 10 * kSegment);
  for (int i = 0; i < 6; ++i) board.reserve(i * kSegment);
  board.sack(2 * kSegment, 3);
  board.sack(4 * kSegment, 3);
  board.retransmitted(0);
  EXPECT_EQ(board.retransmitted_bytes(), kSegment);
  board.mark_outstanding_lost();
  EXPECT_EQ(board.sacked_bytes(), 2 * kSegment);
  EXPECT_EQ(board.lost_bytes(), 4 * kSegment);  // segments 0, 1, 3 and 5
  EXPECT_EQ(board.retransmitted_bytes(), 0u);
  std::vector<std::uint64_t> resent;
  while (board.has_hole_to_resend()) {
    resent.push_back(board.hole_to_resend() / kSegment);
    board.retransmitted(board.hole_to_resend());
  }
  EXPECT_EQ(resent, (std::vector<std::uint64_t>{0, 1, 3, 5}));
}

// With tail loss probes too (tests/transport/tail_loss_test.cc).
TEST(WindowSack, EveryByteArrivesUnderOnePercentLoss) {
  for (const bool probe : {false, true}) {
    for (const char* transport : {"reno", "dctcp", "safs"}) {
      ExperimentConfig config = testing::star(5, 1500);
      config.transport = transport;
      config.transport_params["sack"] = true;
      config.transport_params["tail_loss_probe"] = probe;
      config.network.link_loss_rate = 0.01;
      config.seed = 7;
      const std::uint64_t sizes[] = {1, 1499, 1500, 1501, 3'000'000, 5'000'000};
      int i = 0;
      for (const std::uint64_t size : sizes) {
        testing::add_flow(config, 1 + i % 4, 0, size, i * 10 * kPsPerUs);
        ++i;
      }
      Experiment e(config);
      e.run();
      EXPECT_GT(e.network_totals().wire_losses, 100u) << transport;
      for (const FlowRecord& r : e.recorder().records()) {
        EXPECT_TRUE(r.complete()) << transport << " flow " << r.spec.id;
        EXPECT_EQ(e.transport().delivered_bytes(r.spec.id), r.spec.size_bytes) << transport;
      }
    }
  }
}

// The static-priority baseline: an urgent flow in a class above background
// crosses an incast of background flows almost as if alone; in one class it
// waits its turn in the shared queue. `transport` with `params`.
double urgent_slowdown_in_incast(const char* transport, const Settings& params) {
  ExperimentConfig config = testing::star(6);
  config.transport = transport;
  for (const auto& [key, value] : params) config.transport_params[key] = value;
  for (int s = 1; s <= 4; ++s) testing::add_flow(config, s, 0, 20'000'000);  // background
  testing::add_flow(config, 5, 0, 4'000'000, 200 * kPsPerUs);
  testing::listed_flows(config).back().flow_class = FlowClass::kUrgent;
  Experiment e(config);
  e.run();
  EXPECT_TRUE(e.recorder().all_complete()) << transport;
  return e.recorder().records().back().slowdown();
}

TEST(WindowUrgentPriority, UrgentClassCrossesBackgroundAtItsOwnPace) {
  const double one_class = urgent_slowdown_in_incast("dctcp", {{"urgent_priority", 0}});
  const double own_class = urgent_slowdown_in_incast("dctcp", {{"urgent_priority", 6}});
  EXPECT_LT(own_class, 1.3) << "above the background the urgent flow sees an empty queue";
  EXPECT_GT(one_class, 2.5) << "in one class it shares the receiver's link with four others";
}

// dctcp-prio and d2tcp-prio are their base transport with the urgent class
// on by default: the same run as setting the knob, and with the knob set
// back to 0 the same run as the base transport.
TEST(WindowUrgentPriority, PrioBaselinesAreTheBaseTransportWithTheClassOn) {
  for (const std::string base : {"dctcp", "d2tcp"}) {
    const std::string prio = base + "-prio";
    SCOPED_TRACE(prio);
    const double with_class = urgent_slowdown_in_incast(prio.c_str(), {});
    EXPECT_LT(with_class, 1.3);
    EXPECT_EQ(with_class, urgent_slowdown_in_incast(base.c_str(), {{"urgent_priority", 6}}));
    const double without = urgent_slowdown_in_incast(base.c_str(), {});
    EXPECT_GT(without, 2.5);
    EXPECT_EQ(urgent_slowdown_in_incast(prio.c_str(), {{"urgent_priority", 0}}), without);
  }
}

// The class's level is the highest one below control's, listed as the
// default of the one urgent_priority key; every other key and default is
// the base transport's.
TEST(WindowUrgentPriority, PrioEntriesShareTheBaseKeysWithOneDefaultChanged) {
  for (const std::string base : {"dctcp", "d2tcp"}) {
    const TransportInfo* plain = find_transport(base);
    const TransportInfo* prio = find_transport(base + "-prio");
    ASSERT_NE(plain, nullptr);
    ASSERT_NE(prio, nullptr);
    ASSERT_EQ(prio->keys.size(), plain->keys.size());
    for (std::size_t i = 0; i < plain->keys.size(); ++i) {
      const KeySpec& a = plain->keys[i];
      const KeySpec& b = prio->keys[i];
      EXPECT_EQ(a.path, b.path);
      EXPECT_EQ(a.doc, b.doc);
      if (a.path == "urgent_priority") {
        EXPECT_EQ(a.default_value, Value{std::int64_t{0}});
        EXPECT_EQ(b.default_value, Value{std::int64_t{kTopPriority - 1}});
      } else {
        EXPECT_EQ(a.default_value, b.default_value) << a.path;
      }
    }
  }
}
}  // namespace
}  // namespace safs
