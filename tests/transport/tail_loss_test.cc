// Lost tails: the tail loss probe (WindowConfig::tail_loss_probe, RFC 8985
// section 7) that repairs them in round trips instead of a timeout, and
// SAFS resending a lost blind byte at once.
#include <gtest/gtest.h>

#include <algorithm>

#include "support/experiments.h"
#include "transport/window/sack_scoreboard.h"

namespace safs {
namespace {

constexpr std::uint32_t kSegment = 1000;

TEST(SackScoreboard, LastUnsackedIsTheHighestSegmentNotReported) {
  SackScoreboard board(kSegment, 10 * kSegment);
  EXPECT_EQ(board.last_unsacked(), SackScoreboard::kNoSegment);  // nothing out
  for (int i = 0; i < 5; ++i) board.reserve(i * kSegment);
  EXPECT_EQ(board.last_unsacked(), 4 * kSegment);
  board.sack(4 * kSegment, 3);
  board.sack(3 * kSegment, 3);
  EXPECT_EQ(board.last_unsacked(), 2 * kSegment);
  for (int i = 0; i < 3; ++i) board.sack(i * kSegment, 3);
  EXPECT_EQ(board.last_unsacked(), SackScoreboard::kNoSegment);
}

// One SACKed segment above the holes is fewer than dupthresh: only the
// probe's inference marks them, and only those below it.
TEST(SackScoreboard, SegmentsBelowAnArrivedProbeAreLost) {
  SackScoreboard board(kSegment, 10 * kSegment);
  for (int i = 0; i < 6; ++i) board.reserve(i * kSegment);
  board.sack(1 * kSegment, 3);
  board.sack(5 * kSegment, 3);
  EXPECT_FALSE(board.has_hole_to_resend());
  board.mark_unsacked_lost_below(4 * kSegment);
  EXPECT_EQ(board.lost_bytes(), 3 * kSegment);  // 0, 2 and 3; not 4, sent after the probe's
  std::vector<std::uint64_t> resent;
  while (board.has_hole_to_resend()) {
    resent.push_back(board.hole_to_resend() / kSegment);
    board.retransmitted(board.hole_to_resend());
  }
  EXPECT_EQ(resent, (std::vector<std::uint64_t>{0, 2, 3}));
}

struct BurstResult {
  TimePs last_finish_ps = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t drops = 0;
  bool all_complete = false;
};

// Sixteen senders start a 57,344-byte transfer (an AFD dispatch) to one
// receiver at once, through a port of 150 kB: the burst overflows it, and
// the last segments of several transfers are lost with nothing after them
// to be SACKed.
BurstResult dispatch_burst(const char* transport, bool probe) {
  ExperimentConfig config = testing::star(17);
  config.network.switches.port_buffer_bytes = 150'000;
  config.transport = transport;
  config.transport_params["tail_loss_probe"] = probe;
  for (int s = 1; s <= 16; ++s) testing::add_urgent_flow(config, s, 0, 57'344, 100 * kPsPerUs);
  Experiment e(config);
  e.run();
  BurstResult r;
  r.all_complete = e.recorder().all_complete();
  for (const FlowRecord& f : e.recorder().records()) {
    r.last_finish_ps = std::max(r.last_finish_ps, f.finish_ps);
  }
  r.timeouts = e.transport().stats().timeouts;
  r.drops = e.network_totals().queue_drops;
  return r;
}

TEST(TailLossProbe, RepairsABurstsLostTailsWithoutATimeout) {
  for (const char* transport : {"dctcp", "safs"}) {
    const BurstResult without = dispatch_burst(transport, false);
    const BurstResult with = dispatch_burst(transport, true);
    ASSERT_TRUE(without.all_complete && with.all_complete) << transport;
    ASSERT_GT(without.drops, 0u) << transport;
    EXPECT_GT(without.timeouts, 0u) << transport;
    EXPECT_EQ(with.timeouts, 0u) << transport;
    // The burst takes 73 us at line rate; a timeout adds at least 1 ms.
    EXPECT_GT(without.last_finish_ps, kPsPerMs) << transport;
    EXPECT_LT(with.last_finish_ps, kPsPerMs / 2) << transport;
  }
}

// A transfer sent whole blind is never granted (its receiver does not
// schedule it), so its resends wait for no grant. They waited
// first_grant_wait_us (200 us) before: this burst, its tails probed, then
// ended after 250 us.
TEST(SafsBlindResend, WaitsForNoGrant) {
  const BurstResult r = dispatch_burst("safs", true);
  ASSERT_TRUE(r.all_complete);
  ASSERT_GT(r.drops, 0u);
  EXPECT_LT(r.last_finish_ps, 150 * kPsPerUs);  // 73 us at line rate, and the repairs
}

}  // namespace
}  // namespace safs
