// Deterministic random streams: reproducibility, independence of streams, and
// the ranges and means of the derived distributions.
#include "engine/rng.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>
#include <vector>

namespace safs {
namespace {

std::vector<std::uint64_t> draws(Rng& rng, int n) {
  std::vector<std::uint64_t> out;
  out.reserve(n);
  for (int i = 0; i < n; ++i) out.push_back(rng.next_u64());
  return out;
}

std::vector<std::uint64_t> draws(std::uint64_t seed, const char* stream, std::uint64_t index,
                                 int n) {
  Rng rng(seed, stream, index);
  return draws(rng, n);
}

// Reference outputs of the published algorithms.
TEST(RngTest, SplitMix64MatchesReference) {
  std::uint64_t state = 0;
  EXPECT_EQ(splitmix64(state), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(splitmix64(state), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(splitmix64(state), 0x06c45d188009454fULL);
  EXPECT_EQ(state, 3 * 0x9e3779b97f4a7c15ULL);
}

TEST(RngTest, StableHashIsFnv1a) {
  EXPECT_EQ(stable_hash(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(stable_hash("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(stable_hash("foobar"), 0x85944171f73967e8ULL);
  EXPECT_NE(stable_hash("flow"), stable_hash("wolf"));
}

TEST(RngTest, MixKeysDependsOnBothKeysAndOrder) {
  EXPECT_EQ(mix_keys(1, 2), mix_keys(1, 2));
  EXPECT_NE(mix_keys(1, 2), mix_keys(2, 1));
  EXPECT_NE(mix_keys(1, 2), mix_keys(1, 3));
  EXPECT_NE(mix_keys(0, 0), mix_keys(0, 1));
}

// Pinned outputs: results of every experiment depend on these, so a change to
// the stream derivation must be deliberate (update the values if it is).
TEST(RngTest, PinnedOutputs) {
  Rng rng(1, "pinned", 0);
  EXPECT_EQ(rng.next_u64(), 0x3ff87fbbe4ae38a0ULL);
  EXPECT_EQ(rng.next_u64(), 0xa039b822f8de038cULL);
  EXPECT_EQ(rng.next_u64(), 0x109574781e6a559fULL);
}

TEST(RngTest, SameKeyGivesSameSequence) {
  EXPECT_EQ(draws(42, "flow", 7, 1000), draws(42, "flow", 7, 1000));
  Rng a(42, "arrivals", 3);
  Rng b(42, "arrivals", 3);
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(a.uniform(), b.uniform());
    ASSERT_EQ(a.below(1000), b.below(1000));
    ASSERT_EQ(a.exponential(5.0), b.exponential(5.0));
  }
}

TEST(RngTest, DifferentKeysGiveDifferentSequences) {
  const std::vector<std::uint64_t> base = draws(42, "flow", 7, 100);
  const std::vector<std::vector<std::uint64_t>> others = {
      draws(43, "flow", 7, 100),   // seed
      draws(42, "flow2", 7, 100),  // stream name
      draws(42, "flow", 8, 100),   // index
      draws(42, "flow", 0, 100),
  };
  for (const auto& other : others) {
    // Not just different: no position coincides (a shifted copy would fail).
    int equal = 0;
    for (int i = 0; i < 100; ++i) equal += base[i] == other[i] ? 1 : 0;
    EXPECT_EQ(equal, 0);
    EXPECT_NE(other, base);
  }
  // Many indices of one stream: all first outputs distinct.
  std::set<std::uint64_t> firsts;
  for (std::uint64_t index = 0; index < 1000; ++index) {
    firsts.insert(Rng(42, "per-link", index).next_u64());
  }
  EXPECT_EQ(firsts.size(), 1000u);
}

TEST(RngTest, AddingAStreamDoesNotChangeAnother) {
  const std::vector<std::uint64_t> alone = draws(9, "flow", 1, 200);
  // Same stream, but now other streams are created and drawn from in between.
  Rng target(9, "flow", 1);
  Rng before(9, "flow", 0);
  std::vector<std::uint64_t> interleaved;
  std::vector<Rng> extra;
  for (int i = 0; i < 200; ++i) {
    before.next_u64();
    if (i % 20 == 0) extra.emplace_back(9, "flow", 100 + i);
    for (Rng& r : extra) r.next_u64();
    interleaved.push_back(target.next_u64());
  }
  EXPECT_EQ(interleaved, alone);
}

TEST(RngTest, BelowStaysInRange) {
  Rng rng(5, "below");
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(rng.below(1), 0u);
  const std::array<std::uint64_t, 6> bounds = {
      2, 3, 7, 1000, 1'000'000'007ULL, std::numeric_limits<std::uint64_t>::max()};
  for (const std::uint64_t n : bounds) {
    std::uint64_t max_seen = 0;
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t v = rng.below(n);
      ASSERT_LT(v, n);
      max_seen = v > max_seen ? v : max_seen;
    }
    // The top of the range is reached (or nearly, for huge n).
    EXPECT_GE(static_cast<double>(max_seen), 0.99 * static_cast<double>(n - 1)) << n;
  }
}

TEST(RngTest, BelowIsRoughlyUniform) {
  Rng rng(6, "below-uniform");
  constexpr int kBuckets = 10;
  constexpr int kDraws = 100000;
  std::array<int, kBuckets> counts{};
  for (int i = 0; i < kDraws; ++i) ++counts[rng.below(kBuckets)];
  double chi2 = 0;
  const double expected = static_cast<double>(kDraws) / kBuckets;
  for (const int c : counts) chi2 += (c - expected) * (c - expected) / expected;
  // 9 degrees of freedom: P(chi2 > 27.9) = 0.001.
  EXPECT_LT(chi2, 27.9);
}

TEST(RngTest, UniformInUnitIntervalWithMeanHalf) {
  Rng rng(3, "uniform");
  constexpr int kDraws = 100000;
  double sum = 0;
  double lo = 1;
  double hi = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    lo = u < lo ? u : lo;
    hi = u > hi ? u : hi;
  }
  EXPECT_NEAR(sum / kDraws, 0.5, 0.005);  // sd of the mean ~0.0009
  EXPECT_LT(lo, 0.001);
  EXPECT_GT(hi, 0.999);
}

struct Moments {
  double mean = 0;
  double variance = 0;
};

// The sample mean and variance of `n` draws, each checked finite.
template <class Draw>
Moments moments(int n, Draw draw) {
  double sum = 0;
  double sum_sq = 0;
  for (int i = 0; i < n; ++i) {
    const double x = draw();
    EXPECT_TRUE(std::isfinite(x));
    sum += x;
    sum_sq += x * x;
  }
  const double mean = sum / n;
  return {mean, sum_sq / n - mean * mean};
}

TEST(RngTest, ExponentialMean) {
  for (const double mean : {1.0, 250.0, 1e6}) {
    Rng rng(4, "exponential", static_cast<std::uint64_t>(mean));
    double lowest = 0;
    const Moments m = moments(100000, [&] {
      const double x = rng.exponential(mean);
      lowest = std::min(lowest, x);
      return x;
    });
    EXPECT_GE(lowest, 0.0);
    // sd of the sample mean is mean / sqrt(1e5) ~ 0.32%; allow 2%.
    EXPECT_NEAR(m.mean / mean, 1.0, 0.02) << mean;
    // The variance of an exponential is mean^2.
    EXPECT_NEAR(m.variance / (mean * mean), 1.0, 0.06) << mean;
  }
}

TEST(RngTest, NormalMeanVarianceAndTails) {
  Rng rng(10, "normal");
  constexpr int kDraws = 100000;
  int beyond_two = 0;
  const Moments m = moments(kDraws, [&] {
    const double z = rng.normal();
    beyond_two += std::abs(z) > 2 ? 1 : 0;
    return z;
  });
  EXPECT_NEAR(m.mean, 0.0, 0.015);     // sd of the mean ~0.0032
  EXPECT_NEAR(m.variance, 1.0, 0.02);  // sd of the variance ~0.0045
  // P(|Z| > 2) = 0.0455; sd of the share ~0.00066.
  EXPECT_NEAR(beyond_two / static_cast<double>(kDraws), 0.0455, 0.004);
}

TEST(RngTest, BernoulliFrequency) {
  Rng rng(8, "bernoulli");
  int hits = 0;
  constexpr int kDraws = 100000;
  for (int i = 0; i < kDraws; ++i) hits += rng.bernoulli(0.3) ? 1 : 0;
  EXPECT_NEAR(hits / static_cast<double>(kDraws), 0.3, 0.006);  // sd ~0.0014
  Rng never(8, "bernoulli-edges");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_FALSE(never.bernoulli(0.0));
    ASSERT_TRUE(never.bernoulli(1.0));
  }
}

}  // namespace
}  // namespace safs
