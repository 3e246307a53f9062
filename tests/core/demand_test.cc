// No-bubble demand: the exact rate formula, the line-rate cap, the overdue
// window, background flows and the slack formula.
#include "core/demand.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "core/semantic_flow.h"
#include "core/types.h"

namespace safs::core {
namespace {

constexpr TimePs kUs = kPsPerUs;
constexpr TimePs kMs = 1000 * kPsPerUs;
constexpr double kGbps = 1e9;

SemanticFlow urgent_flow(std::uint64_t remaining, TimePs no_bubble) {
  SemanticFlow f;
  f.id = 1;
  f.size_bytes = remaining;
  f.remaining_bytes = remaining;
  f.no_bubble_ps = no_bubble;
  f.urgency = Urgency::kUrgent;
  return f;
}

TEST(DemandTest, DefaultConfigIsTheDocumentedOne) {
  const DemandConfig c;
  EXPECT_EQ(c.headroom_ps, 10 * kUs);
  EXPECT_DOUBLE_EQ(c.margin, 1.1);
  EXPECT_EQ(c.min_window_ps, 1 * kUs);
}

// rate = margin * remaining * 8 / (t_nb - now - headroom), in bit/s.
TEST(DemandTest, RateIsMarginTimesBytesOverWindow) {
  const DemandConfig c;  // headroom 10 us, margin 1.1
  const TimePs now = 7 * kMs + 3;
  // 1 MB with 1 ms after the headroom: 8e6 bit / 1e-3 s = 8 Gbit/s, times 1.1.
  const Demand d =
      no_bubble_demand(urgent_flow(1'000'000, now + c.headroom_ps + kMs), now, 100 * kGbps, c);
  EXPECT_NEAR(d.rate_bps, 8.8e9, 8.8e9 * 1e-12);
  EXPECT_FALSE(d.overdue);
}

TEST(DemandTest, RateUsesConfiguredMarginAndHeadroom) {
  DemandConfig c;
  c.margin = 1.5;
  c.headroom_ps = 25 * kUs;
  c.min_window_ps = 2 * kUs;
  // 125000 B = 1e6 bit in 100 us = 10 Gbit/s, times 1.5 = 15 Gbit/s.
  const TimePs now = 123 * kUs;
  const Demand d =
      no_bubble_demand(urgent_flow(125'000, now + 25 * kUs + 100 * kUs), now, 100 * kGbps, c);
  EXPECT_NEAR(d.rate_bps, 15e9, 15e9 * 1e-12);
  EXPECT_FALSE(d.overdue);

  // Margin 1 and no headroom: the bare rate.
  c.margin = 1.0;
  c.headroom_ps = 0;
  const Demand bare = no_bubble_demand(urgent_flow(250'000, now + 400 * kUs), now, 100 * kGbps, c);
  EXPECT_NEAR(bare.rate_bps, 5e9, 5e9 * 1e-12);  // 2e6 bit in 400 us
}

TEST(DemandTest, RateIsCappedAtLineRate) {
  const DemandConfig c;
  // 100 MB in 1 ms wants 880 Gbit/s; the line is 100 Gbit/s.
  const Demand d =
      no_bubble_demand(urgent_flow(100'000'000, c.headroom_ps + kMs), 0, 100 * kGbps, c);
  EXPECT_DOUBLE_EQ(d.rate_bps, 100 * kGbps);
  EXPECT_FALSE(d.overdue);
  // The line the caller passes is min(link, sender cap): a 10 Gbit/s cap binds.
  const Demand capped =
      no_bubble_demand(urgent_flow(10'000'000, c.headroom_ps + kMs), 0, 10 * kGbps, c);
  EXPECT_DOUBLE_EQ(capped.rate_bps, 10 * kGbps);  // wanted 88 Gbit/s
  // Just under the cap: not capped. 1.1 * 8e6 / 1e-3 = 8.8 Gbit/s < 10.
  const Demand under =
      no_bubble_demand(urgent_flow(1'000'000, c.headroom_ps + kMs), 0, 10 * kGbps, c);
  EXPECT_NEAR(under.rate_bps, 8.8e9, 8.8e9 * 1e-12);
}

TEST(DemandTest, OverdueWhenWindowAtMostMinWindow) {
  const DemandConfig c;  // min window 1 us
  const TimePs now = 50 * kUs;
  const double line = 40 * kGbps;
  // Window exactly min_window: overdue, full line rate.
  const Demand at =
      no_bubble_demand(urgent_flow(1000, now + c.headroom_ps + c.min_window_ps), now, line, c);
  EXPECT_TRUE(at.overdue);
  EXPECT_DOUBLE_EQ(at.rate_bps, line);
  // One picosecond more: not overdue, and the rate is the formula's
  // (1.1 * 8000 bit / 1e-6 s = 8.8 Gbit/s, far below the line).
  const Demand above =
      no_bubble_demand(urgent_flow(1000, now + c.headroom_ps + c.min_window_ps + 1), now, line, c);
  EXPECT_FALSE(above.overdue);
  EXPECT_NEAR(above.rate_bps, 1.1 * 8000 / (1e-6 + 1e-12), 1.0);
  // Timestamp inside the headroom, or already past: overdue.
  for (const TimePs nb : {now + c.headroom_ps, now + 3 * kUs, now, now - 5 * kMs}) {
    const Demand d = no_bubble_demand(urgent_flow(1000, nb), now, line, c);
    EXPECT_TRUE(d.overdue) << nb;
    EXPECT_DOUBLE_EQ(d.rate_bps, line) << nb;
    EXPECT_LT(d.slack_ps, 0) << nb;
  }
}

TEST(DemandTest, BackgroundAndFinishedFlowsHaveNoDemand) {
  const DemandConfig c;
  SemanticFlow bg = urgent_flow(1'000'000, 100 * kUs);  // would be overdue if urgent
  bg.urgency = Urgency::kBackground;
  const Demand d = no_bubble_demand(bg, 0, 100 * kGbps, c);
  EXPECT_EQ(d.rate_bps, 0.0);
  EXPECT_FALSE(d.overdue);
  EXPECT_EQ(d.slack_ps, kTimeNever);

  bg.no_bubble_ps = kTimeNever;
  EXPECT_EQ(no_bubble_demand(bg, 0, 100 * kGbps, c).rate_bps, 0.0);

  // Urgent without a timestamp yet: no demand.
  const Demand no_ts = no_bubble_demand(urgent_flow(1'000'000, kTimeNever), 0, 100 * kGbps, c);
  EXPECT_EQ(no_ts.rate_bps, 0.0);
  EXPECT_FALSE(no_ts.overdue);
  EXPECT_EQ(no_ts.slack_ps, kTimeNever);

  // Urgent with nothing left: no demand, even when overdue.
  const Demand done = no_bubble_demand(urgent_flow(0, 0), 10 * kMs, 100 * kGbps, c);
  EXPECT_EQ(done.rate_bps, 0.0);
  EXPECT_FALSE(done.overdue);
}

// slack = window - remaining at line rate.
TEST(DemandTest, SlackIsWindowLessLineRateTransfer) {
  const DemandConfig c;
  const TimePs now = 2 * kMs;
  // 1.25 MB = 1e7 bit at 10 Gbit/s = 1 ms; window 3 ms: slack 2 ms.
  const Demand d =
      no_bubble_demand(urgent_flow(1'250'000, now + c.headroom_ps + 3 * kMs), now, 10 * kGbps, c);
  EXPECT_NEAR(static_cast<double>(d.slack_ps), static_cast<double>(2 * kMs), 1.0);
  // Window 0.5 ms: not overdue, slack -0.5 ms, rate capped at the line.
  const Demand tight =
      no_bubble_demand(urgent_flow(1'250'000, now + c.headroom_ps + kMs / 2), now, 10 * kGbps, c);
  EXPECT_FALSE(tight.overdue);
  EXPECT_NEAR(static_cast<double>(tight.slack_ps), static_cast<double>(-kMs / 2), 1.0);
  EXPECT_DOUBLE_EQ(tight.rate_bps, 10 * kGbps);
  // Overdue flows report slack the same way: 10 us past, 1e7 bit at 100 Gbit/s
  // (100 us): -10 us - 100 us (window = t_nb - now - headroom).
  const Demand late = no_bubble_demand(urgent_flow(1'250'000, now), now, 100 * kGbps, c);
  EXPECT_TRUE(late.overdue);
  EXPECT_NEAR(static_cast<double>(late.slack_ps), static_cast<double>(-10 * kUs - 100 * kUs), 1.0);
}

// Over random flows: the rate is the formula's or the line's, whichever is
// less; it grows with the bytes, shrinks as the timestamp moves later.
TEST(DemandTest, RandomFlowsFollowTheFormula) {
  std::mt19937_64 rng(0xde3a4d);
  std::uniform_real_distribution<double> log_bytes(std::log(1e3), std::log(1e8));
  std::uniform_int_distribution<TimePs> window_ps(-kMs, 50 * kMs);
  std::uniform_real_distribution<double> line_gbps(1, 400);
  const DemandConfig c;
  for (int iter = 0; iter < 5000; ++iter) {
    const auto bytes = static_cast<std::uint64_t>(std::exp(log_bytes(rng)));
    const TimePs now = static_cast<TimePs>(rng() % (1000 * kMs));
    const TimePs window = window_ps(rng);
    const double line = line_gbps(rng) * kGbps;
    const Demand d =
        no_bubble_demand(urgent_flow(bytes, now + c.headroom_ps + window), now, line, c);
    ASSERT_GE(d.rate_bps, 0.0);
    ASSERT_LE(d.rate_bps, line);
    const double line_time_ps =
        static_cast<double>(bytes) * 8.0 / line * static_cast<double>(kPsPerSec);
    ASSERT_NEAR(static_cast<double>(d.slack_ps), static_cast<double>(window) - line_time_ps, 2.0);
    if (window <= c.min_window_ps) {
      ASSERT_TRUE(d.overdue);
      ASSERT_EQ(d.rate_bps, line);
      continue;
    }
    ASSERT_FALSE(d.overdue);
    const double formula = c.margin * static_cast<double>(bytes) * 8.0 /
                           (static_cast<double>(window) / static_cast<double>(kPsPerSec));
    ASSERT_NEAR(d.rate_bps, std::min(line, formula), 1e-12 * line);
    // Later timestamp: no more demand. More bytes: no less.
    const Demand later =
        no_bubble_demand(urgent_flow(bytes, now + c.headroom_ps + window + kMs), now, line, c);
    ASSERT_LE(later.rate_bps, d.rate_bps);
    ASSERT_GT(later.slack_ps, d.slack_ps);
    const Demand bigger =
        no_bubble_demand(urgent_flow(bytes * 2, now + c.headroom_ps + window), now, line, c);
    ASSERT_GE(bigger.rate_bps, d.rate_bps);
  }
}

// Regression: an overdue flow whose line rate is 0 (sender cap 0) once got
// slack = time_left - kTimeNever, an int64 overflow that wrapped to a huge
// positive slack. The slack must saturate negative.
TEST(DemandTest, OverdueFlowWithZeroLineRateHasNegativeSlack) {
  const DemandConfig c;
  const TimePs now = 10 * kMs;
  volatile double zero_line = 0.0;  // keep the compiler from folding the overflow away
  const Demand d = no_bubble_demand(urgent_flow(1000, now - kMs), now, zero_line, c);
  EXPECT_TRUE(d.overdue);
  EXPECT_EQ(d.rate_bps, 0.0);
  EXPECT_LT(d.slack_ps, 0);
}

}  // namespace
}  // namespace safs::core
