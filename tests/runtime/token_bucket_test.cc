// The user-space token bucket: its long-run rate, its burst bound, and its
// debt (a large write is paid back before the next one).
#include "runtime/token_bucket.h"

#include <gtest/gtest.h>

namespace safs::runtime {
namespace {

constexpr double kMBps = 1e6;

TEST(TokenBucket, LongRunRateIsTheSetRate) {
  TokenBucket bucket;
  std::int64_t now = kNsPerSecond;
  bucket.set_rate(20 * kMBps, now);
  std::uint64_t sent = 0;
  for (int step = 0; step < 10'000; ++step) {  // 1 s in 100 us steps
    now += 100 * kNsPerUs;
    const std::uint64_t n = bucket.available(now);
    bucket.consume(n);
    sent += n;
  }
  EXPECT_NEAR(static_cast<double>(sent), 20 * kMBps, 0.01 * 20 * kMBps);
}

TEST(TokenBucket, DebtIsPaidBeforeTheNextWrite) {
  TokenBucket bucket;
  std::int64_t now = kNsPerSecond;
  bucket.set_rate(10 * kMBps, now);
  now += 10 * kNsPerMs;
  bucket.consume(bucket.available(now) + 100'000);  // 100 kB more than there was
  EXPECT_EQ(bucket.available(now), 0u);
  // 100 kB at 10 MB/s: 10 ms of debt.
  EXPECT_EQ(bucket.available(now + 9 * kNsPerMs), 0u);
  EXPECT_GT(bucket.available(now + 11 * kNsPerMs), 0u);
}

TEST(TokenBucket, BurstIsBounded) {
  TokenBucket bucket;
  bucket.set_rate(10 * kMBps, kNsPerSecond);
  // Two milliseconds at 10 MB/s is 20 kB, whatever the idle time.
  EXPECT_LE(bucket.available(100 * kNsPerSecond), 20'000u + 1);
}

TEST(TokenBucket, ZeroRateNeverBecomesReady) {
  TokenBucket bucket;
  bucket.set_rate(0, kNsPerSecond);
  EXPECT_EQ(bucket.ready_at_ns(4096, 2 * kNsPerSecond), TokenBucket::kNeverNs);
}

}  // namespace
}  // namespace safs::runtime
