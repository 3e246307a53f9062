// Transfers announced ahead, on real sockets (loopback; Endpoint::
// announce_ahead). Receiver R's 40 Mbit/s downlink is busy with sender B's
// background flow. Sender A announces an urgent 2 MB transfer that starts
// in 100 ms and is due 600 ms later. R plans its rate in just before the
// start and grants it ahead, so B slows down before A's first byte, and A's
// flow goes at its planned grant from the start: no unscheduled burst, no
// wait for a first grant. Unannounced, A starts blind and B keeps the whole
// downlink until A's flow is known.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "runtime/clock.h"
#include "runtime/endpoint.h"
#include "runtime/test_support.h"

namespace safs::runtime::testing {
namespace {

constexpr double kLinkBps = 40 * kMbps;
constexpr std::size_t kBackgroundBytes = 6 << 20;  // about 1.3 s of the whole downlink
constexpr std::size_t kUrgentBytes = 2 << 20;      // needs about 28 Mbit/s over its slack
constexpr std::int64_t kStartsInNs = 100 * kMs;
// A starts a little after its projected start (in time up to half a lease,
// 100 ms), so the planned grant has surely come on a loaded machine.
constexpr std::int64_t kLateStartNs = 20 * kMs;
constexpr std::int64_t kSlackNs = 600 * kMs;
constexpr std::uint64_t kGroup = 7;

struct Start {
  FlowStatus urgent_at_send;      // A's flow right after send(), before any progress
  double background_at_send_bps;  // B's flow's rate then
  FlowState urgent_end = FlowState::kPending;
  std::int64_t urgent_fct_ns = 0;
  EndpointStats a, r;
};

Start urgent_start(bool announce) {
  const EndpointConfig config = config_at("127.0.0.1", kLinkBps, nullptr);
  Endpoint r(config);
  LoopThread r_loop(r);
  Endpoint a(config), b(config);
  const auto background = random_bytes(kBackgroundBytes, 1);
  const auto urgent = random_bytes(kUrgentBytes, 2);
  const FlowHandle b_flow = b.send(r.address(), background, FlowHint::background(1));
  auto drive = [&](std::int64_t until_ns) {
    while (monotonic_ns() < until_ns) {
      a.progress(kMs / 2);
      b.progress(kMs / 2);
    }
  };
  drive(monotonic_ns() + 200 * kMs);  // B has the downlink
  const std::int64_t start = monotonic_ns() + kStartsInNs;
  FlowHint hint;
  hint.urgent = true;
  hint.group = kGroup;
  hint.tag = 2;
  hint.deadline_ns = start + kSlackNs;
  if (announce) {
    std::string why_not;
    EXPECT_TRUE(a.announce_ahead(r.address(), kUrgentBytes, start, hint, &why_not)) << why_not;
  }
  drive(start + kLateStartNs);
  Start run;
  run.background_at_send_bps = b.test(b_flow).rate_bps;
  const std::int64_t sent_at = monotonic_ns();
  const FlowHandle a_flow = a.send(r.address(), urgent, hint);
  run.urgent_at_send = a.test(a_flow);
  while (monotonic_ns() - sent_at < 5 * kSecond) {
    a.progress(kMs / 2);
    b.progress(kMs / 2);
    const FlowStatus status = a.test(a_flow);
    if (status.state == FlowState::kPending) continue;
    run.urgent_end = status.state;
    run.urgent_fct_ns = monotonic_ns() - sent_at;
    break;
  }
  run.a = a.stats();
  run.r = r_loop.stats();
  return run;
}

TEST(AnnounceAhead, APlannedFlowStartsAtItsGrantAndTheBackgroundYieldsAhead) {
  const Start planned = urgent_start(true);
  const Start blind = urgent_start(false);
  // Planned: granted before its first byte, at a finite rate near what its
  // slack needs, and the background already cut to make room.
  EXPECT_TRUE(planned.urgent_at_send.granted);
  EXPECT_TRUE(std::isfinite(planned.urgent_at_send.rate_bps));
  EXPECT_GT(planned.urgent_at_send.rate_bps, 0.5 * kLinkBps);
  EXPECT_LT(planned.background_at_send_bps, 0.5 * kLinkBps);
  EXPECT_EQ(planned.a.plans_sent, 1u);
  EXPECT_EQ(planned.a.flows_on_plans, 1u);
  EXPECT_EQ(planned.r.plans_received, 1u);
  EXPECT_EQ(planned.r.plans_unused, 0u);
  EXPECT_EQ(planned.r.plans_infeasible, 0u);
  // Unannounced: blind (unpaced) at first, and the background at its whole share.
  EXPECT_FALSE(blind.urgent_at_send.granted);
  EXPECT_TRUE(std::isinf(blind.urgent_at_send.rate_bps));
  EXPECT_GT(blind.background_at_send_bps, 0.9 * kLinkBps);
  EXPECT_EQ(blind.a.flows_on_plans, 0u);
  // Both arrive about when due: served just in time, each finishes a few ms
  // before its deadline (measured 575-579 ms after its send, due 580 ms
  // after); the bound leaves a loaded machine some room.
  for (const Start& run : {planned, blind}) {
    EXPECT_EQ(run.urgent_end, FlowState::kDone);
    EXPECT_LT(run.urgent_fct_ns, kSlackNs - kLateStartNs + 100 * kMs)
        << run.urgent_fct_ns / kMs << " ms";
  }
}

TEST(AnnounceAhead, WhatCannotBePlannedIsRefusedWithItsReason) {
  Endpoint r(config_at("127.0.0.1", kLinkBps, nullptr));
  Endpoint a(config_at("127.0.0.1", kLinkBps, nullptr));
  const std::int64_t soon = monotonic_ns() + 50 * kMs;
  FlowHint urgent = FlowHint::urgent_within(kSecond);
  urgent.group = 3;
  struct Case {
    std::uint64_t size_bytes;
    std::int64_t start_ns;
    FlowHint hint;
    const char* reason;
  };
  FlowHint no_group = urgent;
  no_group.group = 0;
  FlowHint background = FlowHint::background();
  background.group = 3;
  for (const Case& c :
       {Case{1 << 20, soon, background, "only urgent"},
        Case{1 << 20, soon, no_group, "needs a group"}, Case{0, soon, urgent, "needs a size"},
        Case{1 << 20, monotonic_ns() - kMs, urgent, "has passed"},
        Case{1 << 20, monotonic_ns() + 11 * kSecond, urgent, "ahead"}}) {
    std::string why_not;
    EXPECT_FALSE(a.announce_ahead(r.address(), c.size_bytes, c.start_ns, c.hint, &why_not));
    EXPECT_NE(why_not.find(c.reason), std::string::npos) << why_not;
  }
  EXPECT_EQ(a.stats().plans_sent, 0u);
}

// A sender that announces without end gets PeerLimits::max_plans planned at
// once; the rest are ignored, and plans nobody sends expire a lease after
// their start, each counted against the sender's standing.
TEST(AnnounceAhead, PlansAreBoundedPerPeerAndExpireUnused) {
  CapturedLog log;
  Endpoint r(config_at("127.0.0.1", kLinkBps, &log));
  LoopThread r_loop(r);
  Endpoint a(config_at("127.0.0.1", kLinkBps, nullptr));
  const std::uint32_t limit = EndpointConfig{}.limits.max_plans;
  const std::int64_t start = monotonic_ns() + 20 * kMs;
  for (std::uint64_t group = 1; group <= limit + 12; ++group) {
    FlowHint hint = FlowHint::urgent_within(kSecond);
    hint.group = group;
    ASSERT_TRUE(a.announce_ahead(r.address(), 1 << 20, start, hint));
  }
  const std::int64_t lease_ns = from_core_ps(EndpointConfig{}.scheduler.grants.validity_ps);
  while (monotonic_ns() < start + lease_ns + 100 * kMs) a.progress(kMs);
  const EndpointStats stats = r_loop.stats();
  EXPECT_EQ(a.stats().plans_sent, limit + 12);
  EXPECT_EQ(stats.plans_received, limit);
  EXPECT_EQ(stats.plans_refused, 12u);
  EXPECT_EQ(stats.plans_unused, limit);
  EXPECT_TRUE(log.contains("plans pending")) << log.all();
}

}  // namespace
}  // namespace safs::runtime::testing
