// A sender's share of its uplink across the grants several receivers gave it:
// urgent before background, least slack first, never above a grant, never
// above the uplink.
#include "core/sender_share.h"
#include "core/uplink_report.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "core/types.h"

namespace safs::core {
namespace {

constexpr TimePs kUs = kPsPerUs;
constexpr double kGbps = 1e9;

SenderFlow make(FlowId id, double granted, bool urgent, TimePs slack = kTimeNever) {
  SenderFlow f;
  f.id = id;
  f.granted_bps = granted;
  f.urgent = urgent;
  f.slack_ps = slack;
  return f;
}

// Flow 1 is due first but, longer, has less slack than flow 2 only until it
// has drained: by slack it goes second, by timestamp first.
TEST(SenderShareTest, UrgentByDeadlineServesTheEarliestTimestampFirst) {
  SenderFlow first = make(1, 60 * kGbps, true, 30 * kUs);
  first.no_bubble_ps = 100 * kUs;
  SenderFlow second = make(2, 60 * kGbps, true, 10 * kUs);
  second.no_bubble_ps = 200 * kUs;
  const std::vector<SenderFlow> flows = {first, second};
  std::vector<std::size_t> order;
  std::vector<double> available;
  std::vector<TimePs> waits;
  uplink_shares(flows, 100 * kGbps, order, available, waits);
  EXPECT_DOUBLE_EQ(available[0], 40 * kGbps);  // by slack: flow 2 first
  EXPECT_DOUBLE_EQ(available[1], 100 * kGbps);
  uplink_shares(flows, 100 * kGbps, order, available, waits, {.urgent_by_deadline = true});
  EXPECT_DOUBLE_EQ(available[0], 100 * kGbps);
  EXPECT_DOUBLE_EQ(available[1], 40 * kGbps);
}

TEST(SenderShareTest, HandExampleExactSplit) {
  // Uplink 100: urgent by slack (U2 5 us, U1 10 us, U3 20 us), then background.
  const std::vector<SenderFlow> flows = {
      make(1, 30 * kGbps, true, 10 * kUs), make(2, 50 * kGbps, true, 5 * kUs),
      make(3, 40 * kGbps, false), make(4, 40 * kGbps, true, 20 * kUs)};
  const std::vector<double> r = achievable_rates(flows, 100 * kGbps);
  ASSERT_EQ(r.size(), 4u);  // input order
  EXPECT_DOUBLE_EQ(r[0], 30 * kGbps);
  EXPECT_DOUBLE_EQ(r[1], 50 * kGbps);
  EXPECT_DOUBLE_EQ(r[2], 0.0);
  EXPECT_DOUBLE_EQ(r[3], 20 * kGbps);
}

TEST(SenderShareTest, UndersubscribedGetsEveryGrant) {
  const std::vector<SenderFlow> flows = {
      make(1, 10 * kGbps, false), make(2, 20 * kGbps, true, -kUs), make(3, 30 * kGbps, true, kUs)};
  const std::vector<double> r = achievable_rates(flows, 100 * kGbps);
  EXPECT_DOUBLE_EQ(r[0], 10 * kGbps);
  EXPECT_DOUBLE_EQ(r[1], 20 * kGbps);
  EXPECT_DOUBLE_EQ(r[2], 30 * kGbps);
}

TEST(SenderShareTest, UrgentBeforeBackgroundEvenWithLessSlackOnBackground) {
  // A background flow's slack (if a caller set one) does not put it ahead.
  const std::vector<SenderFlow> flows = {make(1, 80 * kGbps, false, -100 * kUs),
                                         make(2, 80 * kGbps, true, 50 * kUs)};
  const std::vector<double> r = achievable_rates(flows, 100 * kGbps);
  EXPECT_DOUBLE_EQ(r[1], 80 * kGbps);
  EXPECT_DOUBLE_EQ(r[0], 20 * kGbps);
}

TEST(SenderShareTest, TiesBrokenById) {
  const std::vector<SenderFlow> flows = {make(9, 60 * kGbps, true, kUs),
                                         make(3, 60 * kGbps, true, kUs)};
  const std::vector<double> r = achievable_rates(flows, 100 * kGbps);
  EXPECT_DOUBLE_EQ(r[1], 60 * kGbps);  // id 3 first
  EXPECT_DOUBLE_EQ(r[0], 40 * kGbps);
}

TEST(SenderShareTest, EdgeCases) {
  EXPECT_TRUE(achievable_rates({}, 100 * kGbps).empty());
  // No uplink: nothing for anyone. A negative grant gives nothing and takes nothing.
  const std::vector<double> none = achievable_rates({make(1, 10 * kGbps, true, 0)}, 0.0);
  EXPECT_EQ(none[0], 0.0);
  const std::vector<double> neg =
      achievable_rates({make(1, -5 * kGbps, true, 0), make(2, 10 * kGbps, true, 1)}, 10 * kGbps);
  EXPECT_EQ(neg[0], 0.0);
  EXPECT_DOUBLE_EQ(neg[1], 10 * kGbps);
}

// Over random flow sets: total <= uplink, no flow above its grant, and the
// service order is strict priority: once a flow is short of its grant,
// every flow after it (background after urgent, more slack after less)
// gets nothing, and every flow before it gets its whole grant.
TEST(SenderShareTest, RandomSetsRespectUplinkGrantsAndOrder) {
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> grant_gbps(0, 60);
  for (int iter = 0; iter < 3000; ++iter) {
    const std::size_t n = rng() % 12;
    std::vector<SenderFlow> flows;
    for (std::size_t k = 0; k < n; ++k) {
      const bool urgent = rng() % 3 != 0;
      const TimePs slack =
          urgent ? static_cast<TimePs>(rng() % (2000 * kUs)) - 500 * kUs : kTimeNever;
      flows.push_back(make(static_cast<FlowId>(k * 7 + 1), grant_gbps(rng) * kGbps, urgent, slack));
    }
    const double uplink = std::uniform_real_distribution<double>(0, 200)(rng) * kGbps;
    const std::vector<double> r = achievable_rates(flows, uplink);
    ASSERT_EQ(r.size(), n);
    const double total = std::accumulate(r.begin(), r.end(), 0.0);
    ASSERT_LE(total, uplink * (1 + 1e-12));
    double granted = 0;
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_GE(r[i], 0.0);
      ASSERT_LE(r[i], flows[i].granted_bps);
      granted += flows[i].granted_bps;
    }
    // Work conserving: the uplink is full or everyone has its grant.
    ASSERT_GE(total, std::min(uplink, granted) * (1 - 1e-12));

    std::vector<std::size_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      const SenderFlow& x = flows[a];
      const SenderFlow& y = flows[b];
      if (x.urgent != y.urgent) return x.urgent;
      if (x.slack_ps != y.slack_ps) return x.slack_ps < y.slack_ps;
      return x.id < y.id;
    });
    bool short_seen = false;
    for (const std::size_t i : order) {
      if (short_seen) {
        ASSERT_EQ(r[i], 0.0) << "iteration " << iter;
      } else if (r[i] < flows[i].granted_bps) {
        short_seen = true;
      }
    }
    // Pairwise: an urgent flow short of its grant means no background flow got anything.
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        if (flows[i].urgent && !flows[j].urgent && r[i] < flows[i].granted_bps) {
          ASSERT_EQ(r[j], 0.0);
        }
        if (flows[i].urgent && flows[j].urgent && flows[i].slack_ps < flows[j].slack_ps &&
            r[i] < flows[i].granted_bps) {
          ASSERT_EQ(r[j], 0.0);
        }
      }
    }
  }
}

// available_rates: the uplink less what the flows served earlier were granted.
TEST(SenderShareTest, AvailableRatesHandExample) {
  const std::vector<SenderFlow> flows = {
      make(1, 30 * kGbps, true, 10 * kUs), make(2, 50 * kGbps, true, 5 * kUs),
      make(3, 40 * kGbps, false), make(4, 40 * kGbps, true, 20 * kUs)};
  const std::vector<double> a = available_rates(flows, 100 * kGbps);
  ASSERT_EQ(a.size(), 4u);
  EXPECT_DOUBLE_EQ(a[1], 100 * kGbps);  // first: the whole uplink
  EXPECT_DOUBLE_EQ(a[0], 50 * kGbps);   // after U2's 50
  EXPECT_DOUBLE_EQ(a[3], 20 * kGbps);   // after 80
  EXPECT_DOUBLE_EQ(a[2], 0.0);          // after 120: never negative
}

// A flow's available rate does not depend on its own grant, bounds what it
// achieves, and equals the achieved rate whenever the flow is short.
TEST(SenderShareTest, AvailableRatesRandomProperties) {
  std::mt19937_64 rng(777);
  std::uniform_real_distribution<double> grant_gbps(0, 60);
  // One sender's working memory across every instance, as the transport keeps it.
  std::vector<std::size_t> order;
  std::vector<double> reused_available;
  std::vector<TimePs> reused_waits;
  for (int iter = 0; iter < 2000; ++iter) {
    const std::size_t n = 1 + rng() % 10;
    std::vector<SenderFlow> flows;
    for (std::size_t k = 0; k < n; ++k) {
      const bool urgent = rng() % 3 != 0;
      flows.push_back(make(static_cast<FlowId>(k + 1), grant_gbps(rng) * kGbps, urgent,
                           urgent ? static_cast<TimePs>(rng() % (1000 * kUs)) : kTimeNever));
    }
    const double uplink = std::uniform_real_distribution<double>(0, 150)(rng) * kGbps;
    const std::vector<double> avail = available_rates(flows, uplink);
    const std::vector<double> got = achievable_rates(flows, uplink);
    ASSERT_EQ(avail.size(), n);
    uplink_shares(flows, uplink, order, reused_available, reused_waits);
    ASSERT_EQ(reused_available, avail);
    ASSERT_EQ(reused_waits, uplink_waits(flows, uplink));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_GE(avail[i], 0.0);
      ASSERT_LE(avail[i], uplink);
      ASSERT_LE(got[i], avail[i] * (1 + 1e-12) + 1e-6);
      if (got[i] < flows[i].granted_bps) {
        ASSERT_NEAR(got[i], avail[i], 1e-3);
      }
      std::vector<SenderFlow> changed = flows;
      changed[i].granted_bps = grant_gbps(rng) * kGbps;
      ASSERT_EQ(available_rates(changed, uplink)[i], avail[i]);
    }
  }
}

// The wait of each flow is the granted bytes served before it, at the full
// uplink: a flow first in line waits nothing, paused flows hold nothing up.
TEST(UplinkWaitsTest, BytesAheadAtTheUplinkRate) {
  const double uplink = 100 * kGbps;
  std::vector<SenderFlow> flows = {
      {.id = 1,
       .granted_bps = 50 * kGbps,
       .urgent = true,
       .slack_ps = 30,
       .remaining_bytes = 125'000},
      {.id = 2,
       .granted_bps = 50 * kGbps,
       .urgent = true,
       .slack_ps = 10,
       .remaining_bytes = 250'000},
      {.id = 3, .granted_bps = 0, .urgent = true, .slack_ps = 20, .remaining_bytes = 1'000'000},
      {.id = 4, .granted_bps = 10 * kGbps, .urgent = false, .remaining_bytes = 125'000},
  };
  const std::vector<TimePs> wait = uplink_waits(flows, uplink);
  ASSERT_EQ(wait.size(), 4u);
  EXPECT_EQ(wait[1], 0);              // least slack: first
  EXPECT_EQ(wait[2], 20 * kPsPerUs);  // behind flow 2's 250 kB
  EXPECT_EQ(wait[0], 20 * kPsPerUs);  // flow 3 is paused: it holds nothing up
  EXPECT_EQ(wait[3], 30 * kPsPerUs);  // background after every urgent flow
}

// One budget blind, or the whole flow when it is short: at most the given
// number of budgets.
TEST(BlindBytesTest, ABudgetOrTheWholeShortFlow) {
  EXPECT_EQ(blind_bytes(114'688, 62'500.0, 2), 114'688u);  // 1.8 budgets: whole
  EXPECT_EQ(blind_bytes(125'001, 62'500.0, 2), 62'500u);   // just over two: one budget
  EXPECT_EQ(blind_bytes(114'688, 62'500.0, 1), 62'500u);   // the proposal's rule
  EXPECT_EQ(blind_bytes(40'000, 62'500.0, 1), 40'000u);    // shorter than the budget
}

}  // namespace
}  // namespace safs::core

namespace safs::core {
namespace {

constexpr double kUplinkBps = 100e9;
constexpr TimePs kHorizonPs = UplinkReportConfig{}.horizon_ps;

ReportDecision::Action action_of(const UplinkReport& r, double available, double granted,
                                 TimePs wait, const UplinkReportConfig& config, TimePs now) {
  return decide_report(r, available, granted, wait, kUplinkBps, config, now).action;
}

TEST(UplinkReportTest, OnlyLimitsThatLastAreReported) {
  const UplinkReportConfig config;
  const UplinkReport none;
  EXPECT_EQ(action_of(none, kNoUplinkLimit, 40e9, 0, config, 0), ReportDecision::Action::kNone);
  EXPECT_EQ(action_of(none, 60e9, 40e9, kHorizonPs, config, 0), ReportDecision::Action::kNone);
  EXPECT_EQ(action_of(none, 20e9, 40e9, kHorizonPs - 1, config, 0),
            ReportDecision::Action::kNone);  // the flows ahead let go too soon to matter
  const ReportDecision d = decide_report(none, 20e9, 40e9, kHorizonPs, kUplinkBps, config, 0);
  EXPECT_EQ(d.action, ReportDecision::Action::kSend);
  EXPECT_EQ(d.rate_bps, 20e9);
}

TEST(UplinkReportTest, PacedReportsWaitOutTheHorizon) {
  const UplinkReportConfig config;
  UplinkReport r;
  note_sent(r, 20e9, 0, config);
  EXPECT_EQ(r.next_report_ps, kHorizonPs);
  EXPECT_EQ(action_of(r, 21e9, 40e9, kHorizonPs, config, 1), ReportDecision::Action::kNone);
  EXPECT_EQ(action_of(r, 10e9, 40e9, kHorizonPs, config, 1), ReportDecision::Action::kWait);
  EXPECT_EQ(action_of(r, 10e9, 40e9, kHorizonPs, config, kHorizonPs),
            ReportDecision::Action::kSend);
  UplinkReportConfig unpaced;
  unpaced.paced = false;
  UplinkReport u;
  note_sent(u, 20e9, 0, unpaced);
  EXPECT_EQ(action_of(u, 10e9, 40e9, kHorizonPs, unpaced, 1), ReportDecision::Action::kSend);
}

// A limit that lifts: "no limit" by default; with keep_cap, what the uplink
// can give, and nothing at all where the grant is below the cap.
TEST(UplinkReportTest, ALiftedLimitIsNoLimitOrTheKeptCap) {
  UplinkReportConfig config;
  UplinkReport r;
  note_sent(r, 20e9, 0, config);
  const TimePs later = kHorizonPs;
  ReportDecision d = decide_report(r, 60e9, 20e9, kHorizonPs, kUplinkBps, config, later);
  EXPECT_EQ(d.action, ReportDecision::Action::kSend);
  EXPECT_EQ(d.rate_bps, kNoUplinkLimit);
  config.keep_cap = true;
  d = decide_report(r, 60e9, 20e9, kHorizonPs, kUplinkBps, config, later);
  EXPECT_EQ(d.action, ReportDecision::Action::kSend);
  EXPECT_EQ(d.rate_bps, 60e9);
  EXPECT_EQ(action_of(r, 60e9, 10e9, kHorizonPs, config, later), ReportDecision::Action::kNone);
  d = decide_report(r, 60e9, 20e9, 0, kUplinkBps, config, later);  // no lasting hold: no cap
  EXPECT_EQ(d.rate_bps, kNoUplinkLimit);
}

TEST(UplinkReportTest, AGrantAboveTheReportIsALostReportOnlyWhenItCameAfterIt) {
  const UplinkReportConfig config;
  const TimePs delay = 5 * kPsPerUs;
  UplinkReport r;
  EXPECT_FALSE(report_was_lost(r, 50e9, 0, delay, config));  // nothing reported
  note_sent(r, 20e9, 0, config);
  EXPECT_FALSE(report_was_lost(r, 50e9, 2 * delay, delay, config));  // it may have crossed
  EXPECT_TRUE(report_was_lost(r, 50e9, 2 * delay + 1, delay, config));
  EXPECT_FALSE(report_was_lost(r, 21e9, 10 * delay, delay, config));  // within the threshold
}

TEST(SenderFlowTest, TimedUrgentFlowsBySlackTheRestByRemainingTime) {
  constexpr double kGigabytePerSecondBps = 8e9;  // 1 MB takes 1 ms
  constexpr TimePs kNow = 5 * kPsPerMs;
  const SenderFlow timed =
      sender_flow(1, 2e9, true, 9 * kPsPerMs, 1'000'000, kGigabytePerSecondBps, kNow);
  EXPECT_EQ(timed.slack_ps, 3 * kPsPerMs);  // 4 ms to its timestamp, 1 ms to send
  EXPECT_EQ(timed.no_bubble_ps, 9 * kPsPerMs);
  EXPECT_EQ(timed.granted_bps, 2e9);
  EXPECT_EQ(timed.remaining_bytes, 1'000'000u);
  // Without a timestamp, or background with one: shortest remaining first.
  const SenderFlow untimed =
      sender_flow(2, 2e9, true, kTimeNever, 2'000'000, kGigabytePerSecondBps, kNow);
  EXPECT_EQ(untimed.slack_ps, 2 * kPsPerMs);
  EXPECT_EQ(untimed.no_bubble_ps, kTimeNever);
  const SenderFlow background =
      sender_flow(3, 2e9, false, 9 * kPsPerMs, 2'000'000, kGigabytePerSecondBps, kNow);
  EXPECT_FALSE(background.urgent);
  EXPECT_EQ(background.slack_ps, 2 * kPsPerMs);
  EXPECT_EQ(background.no_bubble_ps, kTimeNever);
  // A late flow has negative slack; no uplink at all does not overflow.
  EXPECT_LT(sender_flow(4, 1e9, true, kNow, 1'000'000, kGigabytePerSecondBps, kNow).slack_ps, 0);
  EXPECT_LT(sender_flow(5, 1e9, true, 0, 1'000'000, 0, kNow).slack_ps, 0);
}

}  // namespace
}  // namespace safs::core
