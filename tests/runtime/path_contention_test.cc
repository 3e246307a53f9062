// PathContention: a path is contended only when its paced flows fall short
// of their grants and lose packets, and stops being so once they get them.
#include "runtime/path_contention.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "runtime/endpoint.h"
#include "test_support.h"

namespace safs::runtime {
namespace {

constexpr std::int64_t kMs = 1'000'000;

// Feeds `windows` windows of 1 ms ticks: per tick, `allowed` bytes granted,
// `delivered` bytes acknowledged, and `retransmits` in the window's first tick.
void feed(PathContention& path, std::int64_t& now, int windows, double allowed, double delivered,
          std::uint32_t retransmits, std::int64_t queue_delay_ns = 0) {
  const ContentionFallback defaults;
  const int ticks = static_cast<int>(defaults.window_ns / kMs);
  for (int w = 0; w < windows; ++w) {
    for (int t = 0; t < ticks; ++t) {
      now += kMs;
      path.add_allowed(allowed, t == 0 ? retransmits : 0, queue_delay_ns, now);
      path.add_written(static_cast<std::uint64_t>(delivered), now);
    }
  }
}

constexpr double kGrantPerTick = 25'000;  // 200 Mbit/s for 1 ms

// Whether a new path is contended after three windows that delivered
// `delivered_share` of a 200 Mbit/s grant.
bool contended_after(double delivered_share, std::uint32_t retransmits,
                     std::int64_t queue_delay_ns = 0) {
  PathContention path{ContentionFallback{}};
  std::int64_t now = 0;
  feed(path, now, 3, kGrantPerTick, delivered_share * kGrantPerTick, retransmits, queue_delay_ns);
  return path.contended(now);
}

TEST(PathContention, ShortOfGrantsWithLossIsContended) {
  PathContention path{ContentionFallback{}};
  std::int64_t now = 0;
  feed(path, now, 2, kGrantPerTick, 0.6 * kGrantPerTick, 3);
  EXPECT_TRUE(path.contended(now));
  EXPECT_EQ(path.episodes(), 1u);
}

TEST(PathContention, ShortOfGrantsBehindAQueueIsContended) {
  // Someone else's queue at the bottleneck: no loss yet, but every round
  // trip waits behind it and the flows, paced, fall short.
  EXPECT_TRUE(contended_after(0.3, 0, 60 * kMs));
}

TEST(PathContention, ShortBehindAShortQueueIsNot) {
  EXPECT_FALSE(contended_after(0.3, 0, 2 * kMs));
}

TEST(PathContention, ShortWithoutLossOrQueueIsNot) {
  // An application that writes slowly, or a receiver that reads slowly:
  // pacing costs nothing there.
  EXPECT_FALSE(contended_after(0.5, 0));
}

TEST(PathContention, LossAtTheGrantIsNot) {
  // A flow that gets its grant but lost a packet is not held back by pacing.
  EXPECT_FALSE(contended_after(0.95, 2));
}

TEST(PathContention, TooLittleGrantedSaysNothing) {
  ContentionFallback config;
  PathContention path{config};
  std::int64_t now = 0;
  const double trickle = static_cast<double>(config.min_allowed_bytes) / 40;  // per 1 ms tick
  feed(path, now, 3, trickle, 0, 5);
  EXPECT_FALSE(path.contended(now));
}

TEST(PathContention, EndsAsSoonAsTheFlowsGetTheirGrants) {
  PathContention path{ContentionFallback{}};
  std::int64_t now = 0;
  feed(path, now, 2, kGrantPerTick, 0.5 * kGrantPerTick, 3);
  ASSERT_TRUE(path.contended(now));
  // Unpaced, still short of the grants (though above the shortfall ratio,
  // and with no loss or queue): stays contended window after window.
  feed(path, now, 5, kGrantPerTick, 0.9 * kGrantPerTick, 0);
  ASSERT_TRUE(path.contended(now));
  // The competitor left: unpaced flows deliver more than their grants. The
  // path is paced again at the end of the first window that shows it: well
  // within the three 10 ms windows in which a receiver would demote a
  // sender over 1.5 times its grant.
  const std::int64_t before = now;
  for (int t = 0; t < 60 && path.contended(now); ++t) {
    now += kMs;
    path.add_allowed(kGrantPerTick, 0, 0, now);
    path.add_written(static_cast<std::uint64_t>(2 * kGrantPerTick), now);
  }
  EXPECT_FALSE(path.contended(now));
  EXPECT_LE(now - before, 21 * kMs);
  EXPECT_EQ(path.episodes(), 1u);
}

TEST(PathContention, ForgottenWithoutEvidence) {
  ContentionFallback config;
  PathContention path{config};
  std::int64_t now = 0;
  feed(path, now, 2, kGrantPerTick, 0.5 * kGrantPerTick, 3);
  ASSERT_TRUE(path.contended(now));
  EXPECT_TRUE(path.contended(now + config.memory_ns / 2));
  EXPECT_FALSE(path.contended(now + config.memory_ns));
}

TEST(PathContention, DisabledIsNeverContended) {
  ContentionFallback config;
  config.enabled = false;
  PathContention path{config};
  std::int64_t now = 0;
  feed(path, now, 3, kGrantPerTick, 0.2 * kGrantPerTick, 9);
  EXPECT_FALSE(path.contended(now));
}

// A fallback window as long as the overrun check's horizon would let a
// receiver demote a sender for running unpaced: refused at start.
TEST(PathContention, EndpointRefusesAWindowPastTheOverrunCheck) {
  EndpointConfig config = testing::config_at("127.0.0.1", 1e9, nullptr);
  config.contention_fallback.window_ns = config.enforcement.window_ns * config.enforcement.windows;
  EXPECT_THROW(Endpoint{config}, std::invalid_argument);
  config.contention_fallback.enabled = false;
  EXPECT_NO_THROW(Endpoint{config});
}

}  // namespace
}  // namespace safs::runtime
