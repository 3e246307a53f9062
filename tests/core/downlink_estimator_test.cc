// DownlinkEstimator: a shortfall lowers the budget, recovery raises it, flows
// that are not backlogged leave it alone, and it never drops below its floor.
#include "core/downlink_estimator.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace safs::core {
namespace {

constexpr TimePs kMs = kPsPerMs;
constexpr double kLinkBps = 400e6;  // the namespace testbed's bottleneck

// Started at time 0, so its 50 ms windows end at multiples of 50 ms.
DownlinkEstimator started() {
  DownlinkEstimator e(kLinkBps);
  e.observe(0, 0, 0, true);
  return e;
}

// Feeds `ms` one-millisecond ticks in which the flows, granted
// `granted_bps`, receive `achieved_bps`.
TimePs run(DownlinkEstimator& e, TimePs now, int ms, double granted_bps, double achieved_bps,
           bool backlogged = true) {
  for (int i = 0; i < ms; ++i) {
    now += kMs;
    const auto bytes = static_cast<std::uint64_t>(achieved_bps / 8 / 1000);
    e.observe(now, bytes, granted_bps, backlogged);
  }
  return now;
}

TEST(DownlinkEstimator, StartsAtTheLink) {
  DownlinkEstimator e(kLinkBps);
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);
  EXPECT_DOUBLE_EQ(e.unmanaged_bps(), 0);
}

TEST(DownlinkEstimator, FlowsGettingTheirGrantsKeepTheBudget) {
  DownlinkEstimator e = started();
  run(e, 0, 1000, kLinkBps, 0.98 * kLinkBps);
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);
}

TEST(DownlinkEstimator, ShortfallLowersTheBudgetToWhatTheFlowsGet) {
  DownlinkEstimator e = started();
  // A bulk flow takes half: granted the link, the flows get 200 Mbit/s.
  TimePs now = run(e, 0, 50, kLinkBps, 200e6);
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);  // one window is not enough
  now = run(e, now, 50, kLinkBps, 200e6);
  EXPECT_NEAR(e.budget_bps(), 300e6, 1e6);  // two: half the gap
  now = run(e, now, 800, kLinkBps, 200e6);
  EXPECT_NEAR(e.budget_bps(), 200e6, 5e6);
  EXPECT_NEAR(e.unmanaged_bps(), 200e6, 5e6);
  EXPECT_LT(e.last_ratio(), 0.85);
}

TEST(DownlinkEstimator, ShortfallBelowGrantsThatAreUnderTheBudgetStillCounts) {
  // Just in time: the flows are granted only 240 of 400 Mbit/s and get 120.
  DownlinkEstimator e = started();
  run(e, 0, 1000, 240e6, 120e6);
  EXPECT_NEAR(e.budget_bps(), 120e6, 5e6);
}

TEST(DownlinkEstimator, RecoveryRaisesItBackToTheLink) {
  DownlinkEstimator e = started();
  TimePs now = run(e, 0, 500, kLinkBps, 200e6);
  const double low = e.budget_bps();
  ASSERT_LT(low, 0.6 * kLinkBps);
  // The bulk flow ends: the flows get what they are granted (the budget).
  for (int w = 0; w < 40; ++w) now = run(e, now, 50, e.budget_bps(), e.budget_bps());
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);
}

TEST(DownlinkEstimator, RecoveryIsAProbeNotAJump) {
  DownlinkEstimator e = started();
  TimePs now = run(e, 0, 500, kLinkBps, 200e6);
  const double low = e.budget_bps();
  now = run(e, now, 50, low, low);
  EXPECT_NEAR(e.budget_bps(), low + 0.05 * kLinkBps, 1);
}

TEST(DownlinkEstimator, ApplicationLimitedFlowsDoNotShrinkIt) {
  DownlinkEstimator e(kLinkBps);
  // Granted the link, receiving a tenth: but the senders had nothing more.
  run(e, 0, 1000, kLinkBps, 40e6, /*backlogged=*/false);
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);
}

TEST(DownlinkEstimator, AWindowWithAnyIdleStretchIsNotJudged) {
  DownlinkEstimator e = started();
  TimePs now = 0;
  for (int w = 0; w < 20; ++w) {
    now = run(e, now, 49, kLinkBps, 100e6);
    now = run(e, now, 1, kLinkBps, 100e6, /*backlogged=*/false);
  }
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);
}

TEST(DownlinkEstimator, AShortWindowFollowedByCatchUpIsNoise) {
  DownlinkEstimator e = started();
  TimePs now = 0;
  for (int w = 0; w < 10; ++w) {  // late bytes land in the next window
    now = run(e, now, 50, kLinkBps, 0.4 * kLinkBps);
    now = run(e, now, 50, kLinkBps, 1.5 * kLinkBps);
  }
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);
}

TEST(DownlinkEstimator, NoGrantsNoChange) {
  DownlinkEstimator e = started();
  run(e, 0, 1000, 0, 0);
  EXPECT_DOUBLE_EQ(e.budget_bps(), kLinkBps);
}

TEST(DownlinkEstimator, NeverBelowTheFloor) {
  DownlinkEstimator e = started();
  run(e, 0, 5000, kLinkBps, 0);  // granted, backlogged, nothing arrives
  EXPECT_DOUBLE_EQ(e.budget_bps(), 0.1 * kLinkBps);
  EXPECT_GT(e.budget_bps(), 0);
}

TEST(DownlinkEstimator, BetweenTheThresholdsItHolds) {
  DownlinkEstimator e = started();
  TimePs now = run(e, 0, 500, kLinkBps, 200e6);
  const double low = e.budget_bps();
  run(e, now, 500, low, 0.9 * low);  // 90%: neither shortfall nor recovered
  EXPECT_DOUBLE_EQ(e.budget_bps(), low);
}

TEST(DownlinkEstimator, ShortOfGrantsAfterTwoShortWindowsUntilOneRecovers) {
  DownlinkEstimator e = started();
  TimePs now = run(e, 0, 50, kLinkBps, 0.5 * kLinkBps);
  EXPECT_FALSE(e.short_of_grants());  // one short window is noise
  now = run(e, now, 51, kLinkBps, 0.5 * kLinkBps);
  EXPECT_TRUE(e.short_of_grants());
  now = run(e, now, 100, kLinkBps, 0.9 * kLinkBps);  // between the thresholds
  EXPECT_TRUE(e.short_of_grants());
  run(e, now, 50, kLinkBps, kLinkBps);  // they get their grants again
  EXPECT_FALSE(e.short_of_grants());
}

TEST(DownlinkEstimator, NoiseIsNeverShortOfGrants) {
  DownlinkEstimator e = started();
  TimePs now = 0;
  for (int w = 0; w < 10; ++w) {
    now = run(e, now, 50, kLinkBps, 0.4 * kLinkBps);
    EXPECT_FALSE(e.short_of_grants());
    now = run(e, now, 50, kLinkBps, 1.5 * kLinkBps);
  }
}

// Each 1 ms tick the downlink carries `link_bps` in all, the flows get half
// their grants: busy when someone else took the rest, not when the link
// stayed idle.
TEST(DownlinkEstimator, LinkBusyOnlyWhenTheDownlinkCarriedNearlyItsRate) {
  for (const double carried_bps : {kLinkBps, 0.95 * kLinkBps, 0.6 * kLinkBps}) {
    DownlinkEstimator e = started();
    std::uint64_t total = 1'000'000;  // the interface's counter, read at window ends
    e.observe_link_total(total);      // (read before the first window: it is not judged)
    for (int ms = 1; ms <= 150; ++ms) {
      total += static_cast<std::uint64_t>(carried_bps / 8 / 1000);
      if (e.window_due(ms * kMs)) e.observe_link_total(total);
      e.observe(ms * kMs, static_cast<std::uint64_t>(0.5 * kLinkBps / 8 / 1000), kLinkBps, true);
    }
    EXPECT_TRUE(e.short_of_grants());
    EXPECT_EQ(e.link_busy(), carried_bps >= 0.9 * kLinkBps) << carried_bps;
  }
  DownlinkEstimator unknown = started();  // never told what the link carried
  run(unknown, 0, 150, kLinkBps, 0.5 * kLinkBps);
  EXPECT_TRUE(unknown.short_of_grants());
  EXPECT_FALSE(unknown.link_busy());
  // A window whose start was not read (idle before) is not judged busy,
  // however much the counter moved since.
  DownlinkEstimator gap = started();
  run(gap, 0, 100, kLinkBps, 0.5 * kLinkBps);
  gap.observe_link_total(1);
  gap.observe_link_total(1'000'000'000);  // only the last read counts
  run(gap, 100 * kMs, 50, kLinkBps, 0.5 * kLinkBps);
  EXPECT_FALSE(gap.link_busy());
}

TEST(DownlinkEstimator, RefusesNonsense) {
  EXPECT_THROW(DownlinkEstimator(0), std::invalid_argument);
  DownlinkEstimatorConfig bad;
  bad.floor_fraction = 0;
  EXPECT_THROW(DownlinkEstimator(kLinkBps, bad), std::invalid_argument);
}

}  // namespace
}  // namespace safs::core
