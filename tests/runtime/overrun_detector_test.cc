// OverrunDetector: a sender well above its grant for three windows is
// caught; bytes sent at the old rate and still arriving after a decrease
// (through a deep queue) are not held against it, but only for the grace.
#include "runtime/overrun_detector.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace safs::runtime {
namespace {

constexpr std::int64_t kMs = 1'000'000;
constexpr double kRateBps = 400e6;

// `ms` ticks of 1 ms, each bringing `bps` worth of bytes; true if it fired.
bool feed(OverrunDetector& detector, std::int64_t& now, int ms, double bps) {
  bool fired = false;
  for (int i = 0; i < ms; ++i) {
    now += kMs;
    detector.on_bytes(static_cast<std::uint64_t>(bps / 8 / 1000));
    fired = detector.tick(now) || fired;
  }
  return fired;
}

TEST(OverrunDetector, SustainedOverrunIsCaught) {
  OverrunDetector detector{EnforcementConfig{}};
  std::int64_t now = 0;
  detector.on_grant(kRateBps, now);
  EXPECT_FALSE(feed(detector, now, 100, kRateBps));    // at its grant
  EXPECT_TRUE(feed(detector, now, 40, 2 * kRateBps));  // twice it, three windows
}

TEST(OverrunDetector, BytesInFlightAfterAPauseAreNotAnOverrun) {
  OverrunDetector detector{EnforcementConfig{}};
  std::int64_t now = 0;
  detector.on_grant(kRateBps, now);
  feed(detector, now, 50, kRateBps);
  detector.on_grant(0, now);  // paused; 40 ms of the old rate still queued
  EXPECT_FALSE(feed(detector, now, 40, kRateBps));
  EXPECT_FALSE(feed(detector, now, 100, 0));
}

TEST(OverrunDetector, TheGraceEnds) {
  EnforcementConfig config;
  OverrunDetector detector{config};
  std::int64_t now = 0;
  detector.on_grant(kRateBps, now);
  feed(detector, now, 50, kRateBps);
  detector.on_grant(0, now);  // paused, and it keeps sending
  const std::int64_t paused = now;
  bool fired = false;
  while (!fired && now < paused + 1000 * kMs) fired = feed(detector, now, 1, kRateBps);
  EXPECT_TRUE(fired);
  EXPECT_GE(now - paused, config.decrease_grace_ns);
  EXPECT_LE(now - paused, config.decrease_grace_ns + (config.windows + 1) * config.window_ns);
}

}  // namespace
}  // namespace safs::runtime
