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
#include <stdexcept>
#include <string>
#include <vector>

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
  std::int64_t sent_at_ns = 0;  // when A called send()
  std::vector<FlowRisk> a_risks;
  EndpointStats a, r;
};

Start urgent_start(bool announce, std::int64_t slack_ns = kSlackNs) {
  const EndpointConfig config = config_at("127.0.0.1", kLinkBps, nullptr);
  Endpoint r(config);
  LoopThread r_loop(r);
  Endpoint a(config), b(config);
  Start run;
  a.on_risk([&](const FlowRisk& risk) { run.a_risks.push_back(risk); });
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
  hint.deadline_ns = start + slack_ns;
  if (announce) {
    std::string why_not;
    EXPECT_TRUE(a.announce_ahead(r.address(), kUrgentBytes, start, hint, &why_not)) << why_not;
  }
  drive(start + kLateStartNs);
  run.background_at_send_bps = b.test(b_flow).rate_bps;
  const std::int64_t sent_at = monotonic_ns();
  run.sent_at_ns = sent_at;
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
  EXPECT_EQ(planned.r.plans_refused, 0u);
  EXPECT_EQ(planned.r.plans_infeasible, 0u);
  // Judged at its end: not warned of (on time or, on a loaded machine, late).
  EXPECT_EQ(planned.r.plans_warned_late + planned.r.plans_warned_on_time, 0u);
  EXPECT_EQ(planned.r.plans_unwarned_late + planned.r.plans_unwarned_on_time, 1u);
  EXPECT_EQ(planned.r.plan_warnings_sent, 0u);
  EXPECT_EQ(planned.a.plan_warnings_received, 0u);
  for (const FlowRisk& risk : planned.a_risks) EXPECT_FALSE(risk.planned);
  // Unannounced: blind (unpaced) at first, and the background at its whole share.
  EXPECT_FALSE(blind.urgent_at_send.granted);
  EXPECT_TRUE(std::isinf(blind.urgent_at_send.rate_bps));
  EXPECT_GT(blind.background_at_send_bps, 0.9 * kLinkBps);
  EXPECT_EQ(blind.a.flows_on_plans, 0u);
  // Both arrive about when due: served just in time, each finishes a few ms
  // before its deadline (measured 575-579 ms after its send, due 580 ms
  // after); the bound leaves a loaded machine room (720 ms seen under
  // three CPU hogs).
  for (const Start& run : {planned, blind}) {
    EXPECT_EQ(run.urgent_end, FlowState::kDone);
    EXPECT_LT(run.urgent_fct_ns, kSlackNs - kLateStartNs + 300 * kMs)
        << run.urgent_fct_ns / kMs << " ms";
  }
}

// Due 200 ms after its start, the 2 MB transfer needs 420 ms at the whole
// downlink: the receiver warns of it when it is announced, 100 ms before
// its first byte, and the warning is borne out at its last byte. The
// sender hears it then too, as a risk report of the plan (named by its
// hint's tag) before the send exists.
TEST(AnnounceAhead, APlanThatCannotBeOnTimeIsWarnedOfAndEndsLate) {
  const Start warned = urgent_start(true, 200 * kMs);
  EXPECT_EQ(warned.urgent_end, FlowState::kDone);
  EXPECT_EQ(warned.r.plans_received, 1u);
  EXPECT_EQ(warned.r.plans_infeasible, 1u);
  EXPECT_EQ(warned.r.plans_warned_late, 1u);
  EXPECT_EQ(warned.r.plans_warned_on_time + warned.r.plans_unwarned_late +
                warned.r.plans_unwarned_on_time,
            0u);
  EXPECT_EQ(warned.r.plan_warnings_sent, 1u);
  EXPECT_EQ(warned.a.plan_warnings_received, 1u);
  ASSERT_FALSE(warned.a_risks.empty());
  const FlowRisk& first = warned.a_risks.front();
  EXPECT_TRUE(first.planned);
  EXPECT_EQ(first.flow, 0u);
  EXPECT_EQ(first.tag, 2u);
  EXPECT_LT(first.reported_at_ns, warned.sent_at_ns);
  std::size_t planned_reports = 0;
  for (const FlowRisk& risk : warned.a_risks) planned_reports += risk.planned ? 1 : 0;
  EXPECT_EQ(planned_reports, 1u);  // once per plan
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

// A plan lead below 0 or beyond a day stops the endpoint at its start,
// naming the setting.
TEST(AnnounceAhead, BadPlanLeadsAreRefusedByName) {
  for (const std::int64_t lead_ns : {std::int64_t{-1}, 86'401 * kSecond}) {
    EndpointConfig config = config_at("127.0.0.1", kLinkBps, nullptr);
    config.limits.max_plan_lead_ns = lead_ns;
    try {
      Endpoint endpoint{config};
      ADD_FAILURE() << "max_plan_lead_ns " << lead_ns << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("max_plan_lead_ns"), std::string::npos) << e.what();
    }
  }
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
  // They expire a lease (200 ms) after their start; a loaded machine gets
  // seconds.
  EndpointStats stats;
  const std::int64_t give_up = monotonic_ns() + 5 * kSecond;
  do {
    a.progress(kMs);
    stats = r_loop.stats();
  } while (stats.plans_unused < limit && monotonic_ns() < give_up);
  EXPECT_EQ(a.stats().plans_sent, limit + 12);
  EXPECT_EQ(stats.plans_received, limit);
  EXPECT_EQ(stats.plans_refused, 12u);
  EXPECT_EQ(stats.plans_unused, limit);
  EXPECT_GE(monotonic_ns() - start, 150 * kMs) << "expired before a lease had passed";
  EXPECT_TRUE(log.contains("plans pending")) << log.all();
}

// Drives the sender until `done` holds for the receiver's counters, or 5 s.
template <typename Done>
EndpointStats drive_until(Endpoint& a, LoopThread& r_loop, Done done) {
  EndpointStats stats;
  const std::int64_t give_up = monotonic_ns() + 5 * kSecond;
  do {
    a.progress(kMs);
    stats = r_loop.stats();
  } while (!done(stats) && monotonic_ns() < give_up);
  return stats;
}

// A flow in a planned group that is not what was planned (background, or a
// sixteenth of the size) ends the plan at once and counts against its
// sender; the group may then be planned again. A second plan of a group
// already planned is ignored.
TEST(AnnounceAhead, AFlowThatIsNotWhatWasPlannedEndsThePlanAsMissed) {
  Endpoint r(config_at("127.0.0.1", kLinkBps, nullptr));
  LoopThread r_loop(r);
  Endpoint a(config_at("127.0.0.1", kLinkBps, nullptr));
  FlowHint urgent = FlowHint::urgent_within(kSecond);
  urgent.group = 5;
  const std::int64_t far = monotonic_ns() + 2 * kSecond;
  ASSERT_TRUE(a.announce_ahead(r.address(), 1 << 20, far, urgent));
  ASSERT_TRUE(a.announce_ahead(r.address(), 1 << 20, far, urgent));
  EndpointStats stats = drive_until(
      a, r_loop, [](const EndpointStats& s) { return s.plans_received + s.plans_refused == 2; });
  EXPECT_EQ(stats.plans_received, 1u);
  EXPECT_EQ(stats.plans_refused, 1u);
  const auto payload = random_bytes(64 << 10, 3);
  FlowHint background = FlowHint::background(9);
  background.group = 5;
  const FlowHandle flow = a.send(r.address(), payload, background);
  stats = drive_until(a, r_loop, [](const EndpointStats& s) { return s.plans_unused == 1; });
  EXPECT_EQ(stats.plans_unused, 1u);  // at once, not 2.2 s later
  EXPECT_EQ(a.wait(flow, 5 * kSecond).state, FlowState::kDone);
  // Planned again, then sent urgent at a sixteenth of the size.
  ASSERT_TRUE(a.announce_ahead(r.address(), 1 << 20, far, urgent));
  stats = drive_until(a, r_loop, [](const EndpointStats& s) { return s.plans_received == 2; });
  ASSERT_EQ(stats.plans_received, 2u);
  const auto small = random_bytes(64 << 10, 4);
  EXPECT_EQ(a.wait(a.send(r.address(), small, urgent), 5 * kSecond).state, FlowState::kDone);
  stats = drive_until(a, r_loop, [](const EndpointStats& s) { return s.plans_unused == 2; });
  EXPECT_EQ(stats.plans_unused, 2u);
  EXPECT_EQ(a.stats().flows_on_plans, 0u);  // both started long before their planned grants
}

// A flow that starts before its planned grant came (its op ended early) is
// not held back for it: it starts as an unplanned flow, and ends its plan
// without a miss.
TEST(AnnounceAhead, AFlowThatStartsBeforeItsPlannedGrantGoesUnplanned) {
  Endpoint r(config_at("127.0.0.1", kLinkBps, nullptr));
  LoopThread r_loop(r);
  Endpoint a(config_at("127.0.0.1", kLinkBps, nullptr));
  FlowHint urgent = FlowHint::urgent_within(kSecond, 4);
  urgent.group = 8;
  ASSERT_TRUE(a.announce_ahead(r.address(), 1 << 20, monotonic_ns() + 2 * kSecond, urgent));
  EndpointStats stats =
      drive_until(a, r_loop, [](const EndpointStats& s) { return s.plans_received == 1; });
  ASSERT_EQ(stats.plans_received, 1u);
  const auto payload = random_bytes(1 << 20, 5);
  const FlowHandle flow = a.send(r.address(), payload, urgent);
  EXPECT_FALSE(a.test(flow).granted);  // blind, as without a plan
  EXPECT_EQ(a.wait(flow, 5 * kSecond).state, FlowState::kDone);
  EXPECT_EQ(a.stats().flows_on_plans, 0u);
  stats = r_loop.stats();
  EXPECT_EQ(stats.plans_unused, 0u);
  EXPECT_EQ(stats.incoming_completed, 1u);
}

// A sender that plans 1 MiB transfers and sends a few bytes on each plan
// misses every claim it made (each flow is one claim, its plan's miss not
// another), and is demoted once it has made enough; its later plans are
// ignored.
TEST(AnnounceAhead, PlansServedByTinyFlowsDemoteTheirSender) {
  CapturedLog log;
  Endpoint r(config_at("127.0.0.1", kLinkBps, &log));
  LoopThread r_loop(r);
  Endpoint a(config_at("127.0.0.1", kLinkBps, nullptr));
  const std::uint32_t claims = EndpointConfig{}.enforcement.min_claims + 2;
  const auto tiny = random_bytes(1000, 6);
  for (std::uint32_t i = 1; i <= claims; ++i) {
    FlowHint urgent = FlowHint::urgent_within(kSecond, 10 + i);
    urgent.group = 100 + i;
    ASSERT_TRUE(a.announce_ahead(r.address(), 1 << 20, monotonic_ns() + 2 * kSecond, urgent));
    drive_until(a, r_loop,
                [&](const EndpointStats& s) { return s.plans_received + s.plans_refused == i; });
    EXPECT_EQ(a.wait(a.send(r.address(), tiny, urgent), 5 * kSecond).state, FlowState::kDone);
  }
  const EndpointStats stats = drive_until(a, r_loop, [](const EndpointStats& s) {
    return s.demoted_peers == 1 && s.plans_refused > 0;
  });
  EXPECT_EQ(stats.demoted_peers, 1u) << log.all();
  EXPECT_GE(stats.plans_unused, EndpointConfig{}.enforcement.min_claims);
  EXPECT_GE(stats.plans_refused, 1u);  // planned after the demotion: ignored
  EXPECT_TRUE(log.contains("urgent claims")) << log.all();
}

}  // namespace
}  // namespace safs::runtime::testing
