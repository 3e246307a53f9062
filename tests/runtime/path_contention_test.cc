// PathContention: a path is contended only when its paced flows fall short
// of their grants, window after window, behind loss or a queue, and stops
// being so once they get them; GrantReached paces one flow again once it
// gets its own grant.
#include "runtime/path_contention.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "runtime/endpoint.h"
#include "test_support.h"

namespace safs::runtime {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr double kGrantPerTick = 25'000;  // 200 Mbit/s for 1 ms

// Feeds `windows` windows of 1 ms ticks, each tick a grant's worth allowed,
// `delivered_share` of it delivered, `queue_delay_ns` of queueing and, in
// each window's first tick, `retransmits`.
void feed(PathContention& path, std::int64_t& now, int windows, double delivered_share,
          std::uint32_t retransmits, std::int64_t queue_delay_ns = 0) {
  const int ticks = static_cast<int>(ContentionFallback{}.window_ns / kMs);
  for (int w = 0; w < windows; ++w) {
    for (int t = 0; t < ticks; ++t) {
      now += kMs;
      path.add(kGrantPerTick, static_cast<std::uint64_t>(delivered_share * kGrantPerTick),
               t == 0 ? retransmits : 0, queue_delay_ns, now);
    }
  }
}

// A path that became contended: two short windows with loss, judged when
// the third begins.
PathContention contended_path(std::int64_t& now) {
  PathContention path{ContentionFallback{}};
  feed(path, now, 3, 0.5, 3);
  return path;
}

// Whether a new path is contended after four windows like this.
bool contended_after(double delivered_share, std::uint32_t retransmits,
                     std::int64_t queue_delay_ns = 0) {
  PathContention path{ContentionFallback{}};
  std::int64_t now = 0;
  feed(path, now, 4, delivered_share, retransmits, queue_delay_ns);
  return path.contended(now);
}

TEST(PathContention, ShortOfGrantsWithLossIsContended) {
  std::int64_t now = 0;
  const PathContention path = contended_path(now);
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

TEST(PathContention, OneShortWindowIsNot) {
  // A slow start or one lost segment: a short, lossy window between good
  // ones never makes two in a row.
  PathContention path{ContentionFallback{}};
  std::int64_t now = 0;
  for (int i = 0; i < 4; ++i) {
    feed(path, now, 1, 0.5, 3);
    feed(path, now, 1, 1.0, 0);
  }
  EXPECT_FALSE(path.contended(now));
}

TEST(PathContention, TooLittleGrantedCannotMakeItContended) {
  ContentionFallback config;
  PathContention path{config};
  std::int64_t now = 0;
  const double trickle = static_cast<double>(config.min_allowed_bytes) / 40;  // per 1 ms tick
  for (int t = 0; t < 100; ++t) path.add(trickle, 0, 5, 60 * kMs, now += kMs);
  EXPECT_FALSE(path.contended(now));
}

TEST(PathContention, StaysWhileShortAndEndsWhenTheFlowsGetTheirGrants) {
  std::int64_t now = 0;
  PathContention path = contended_path(now);
  // Unpaced, still short of the grants (though above the shortfall ratio,
  // and with no loss or queue): stays contended window after window.
  feed(path, now, 5, 0.9, 0);
  ASSERT_TRUE(path.contended(now));
  // The competitor left, in the middle of a window: that window may still
  // look short; the next one ends it.
  const std::int64_t left = now + 7 * kMs;
  while (path.contended(now) && now < left + 100 * kMs) {
    now += kMs;
    path.add(kGrantPerTick, static_cast<std::uint64_t>((now < left ? 0.6 : 2.0) * kGrantPerTick), 0,
             0, now);
  }
  EXPECT_FALSE(path.contended(now));
  EXPECT_LE(now - left, 2 * ContentionFallback{}.window_ns);
  EXPECT_EQ(path.episodes(), 1u);
}

TEST(PathContention, EndsEvenWhenTheGrantsAreSmall) {
  // The receiver lowered the grants below what could make a path contended:
  // flows that get them still end it.
  std::int64_t now = 0;
  PathContention path = contended_path(now);
  for (int t = 0; t < 60 && path.contended(now); ++t) path.add(100, 200, 0, 0, now += kMs);
  EXPECT_FALSE(path.contended(now));
}

TEST(PathContention, GrantsReachedBehindAQueueOrWithLossDoNotEndIt) {
  // A flow's last few kB reach their grant in a window otherwise idle, or
  // a flow reaches a grant lower than TCP's share, but the competitor's
  // queue is still there (or a packet was lost): the capacity is not back.
  std::int64_t now = 0;
  PathContention path = contended_path(now);
  const std::int64_t queue_ns = ContentionFallback{}.queue_delay_ns;
  for (int t = 0; t < 60; ++t) path.add(100, 200, 0, queue_ns, now += kMs);
  EXPECT_TRUE(path.contended(now));
  const int window_ticks = static_cast<int>(ContentionFallback{}.window_ns / kMs);
  for (int t = 0; t < 60; ++t) path.add(100, 200, t % window_ticks == 0 ? 1 : 0, 0, now += kMs);
  EXPECT_TRUE(path.contended(now));
  feed(path, now, 3, 1.0, 0, queue_ns);
  EXPECT_TRUE(path.contended(now));
  feed(path, now, 3, 1.0, 1);
  EXPECT_TRUE(path.contended(now));
  // The queue is gone: the first window that gets its grants ends it.
  feed(path, now, 2, 1.0, 0);
  EXPECT_FALSE(path.contended(now));
}

TEST(PathContention, ForgottenWithoutEvidence) {
  std::int64_t now = 0;
  const PathContention path = contended_path(now);
  const ContentionFallback config;
  EXPECT_TRUE(path.contended(now + config.memory_ns / 2));
  EXPECT_FALSE(path.contended(now + config.memory_ns));
}

TEST(PathContention, DisabledIsNeverContendedButStillMeasured) {
  ContentionFallback config;
  config.enabled = false;
  PathContention path{config};
  std::int64_t now = 0;
  feed(path, now, 4, 0.2, 9);
  EXPECT_FALSE(path.contended(now));
  EXPECT_EQ(path.episodes(), 0u);
  // Three windows closed (the fourth closes with the next tick), each 20%
  // delivered, each with a loss.
  EXPECT_EQ(path.delivery().windows[GrantDelivery::bucket(0.2, 1.0)], 3u);
  EXPECT_EQ(path.delivery().lossy_windows, 3u);
}

TEST(GrantDelivery, BucketsByTenthsAtMost) {
  EXPECT_EQ(GrantDelivery::bucket(0, 100), 0u);
  EXPECT_EQ(GrantDelivery::bucket(10, 100), 0u);  // at most 0.1
  EXPECT_EQ(GrantDelivery::bucket(11, 100), 1u);
  EXPECT_EQ(GrantDelivery::bucket(30, 100), 2u);  // 0.3 exactly: at most 0.3
  EXPECT_EQ(GrantDelivery::bucket(100, 100), 9u);
  EXPECT_EQ(GrantDelivery::bucket(101, 100), 10u);  // above its grant
  EXPECT_EQ(GrantDelivery::bucket(5, 0), 10u);
}

TEST(GrantDelivery, CountsJudgedWindowsTheirLossQueueAndLargestQueue) {
  PathContention path{ContentionFallback{}};
  std::int64_t now = 0;
  feed(path, now, 2, 1.0, 0, 1 * kMs);   // at their grants, a short queue
  feed(path, now, 1, 0.55, 0, 7 * kMs);  // short, queued
  feed(path, now, 1, 0.55, 2, 0);        // short, lossy: contended from here
  feed(path, now, 1, 1.2, 0, 0);         // unpaced, above the grants: ends it
  path.add(0, 0, 0, 0, now += kMs);      // closes the last window
  const GrantDelivery& d = path.delivery();
  EXPECT_EQ(d.windows[9], 2u);
  EXPECT_EQ(d.windows[5], 2u);
  EXPECT_EQ(d.windows[10], 1u);
  EXPECT_EQ(d.queued_windows, 1u);
  EXPECT_EQ(d.lossy_windows, 1u);
  EXPECT_EQ(d.max_queue_delay_ns, 7 * kMs);
  EXPECT_EQ(path.episodes(), 1u);
  EXPECT_FALSE(path.contended(now));
  // A trickle is not judged: no window counted.
  PathContention trickle{ContentionFallback{}};
  for (int t = 0; t < 100; ++t) trickle.add(100, 0, 1, 60 * kMs, now += kMs);
  GrantDelivery none;
  EXPECT_EQ(trickle.delivery().windows, none.windows);
  EXPECT_EQ(trickle.delivery().lossy_windows, 0u);

  GrantDelivery sum = d;
  sum += d;
  EXPECT_EQ(sum.windows[5], 4u);
  EXPECT_EQ(sum.max_queue_delay_ns, 7 * kMs);
}

// A flow on a contended path that gets its own grant is paced again within
// about one of its windows (half the path's), whatever the other flows do;
// one that falls short is not.
TEST(GrantReached, PacesAFlowAgainOnceItGetsItsGrant) {
  const ContentionFallback config;
  std::int64_t now = 0;
  GrantReached own(config, now);
  for (int t = 0; t < 30; ++t) own.add(kGrantPerTick, kGrantPerTick / 2, now += kMs);
  EXPECT_FALSE(own.reached());
  const std::int64_t above = now;
  while (!own.reached() && now < above + 100 * kMs) {
    own.add(kGrantPerTick, 3 * kGrantPerTick, now += kMs);
  }
  EXPECT_TRUE(own.reached());
  EXPECT_LE(now - above, config.window_ns);
  // Paced again at its grant, it keeps getting it: it stays paced.
  for (int t = 0; t < 30; ++t) own.add(kGrantPerTick, kGrantPerTick, now += kMs);
  EXPECT_TRUE(own.reached());
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

// A negative grace is a configuration error, named when the endpoint starts.
TEST(OverrunDetector, EndpointRefusesANegativeGrace) {
  EndpointConfig config = testing::config_at("127.0.0.1", 1e9, nullptr);
  config.enforcement.decrease_grace_ns = -1;
  try {
    Endpoint endpoint{config};
    FAIL() << "a negative decrease_grace_ns was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("decrease_grace_ns"), std::string::npos) << e.what();
  }
  config.enforcement.decrease_grace_ns = 0;  // no grace: allowed
  EXPECT_NO_THROW(Endpoint{config});
}

}  // namespace
}  // namespace safs::runtime
