// The integer path of append_seconds must write what "%.9f" of the time in
// seconds writes, to the byte: flows.csv and every *_s column depend on it.
#include "workload/csv_text.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>

namespace safs {
namespace {

std::string printf_seconds(TimePs t) {
  char buf[64];
  const int n = std::snprintf(buf, sizeof buf, "%.9f", ps_to_sec(t));
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string integer_seconds(TimePs t) {
  std::string out;
  append_seconds(out, t);
  return out;
}

TEST(CsvTextTest, SecondsByIntegersMatchPrintf) {
  for (const TimePs t : {TimePs{0}, TimePs{1}, TimePs{499}, TimePs{500}, TimePs{501}, TimePs{1'500},
                         TimePs{999'999'999'500}, TimePs{1'000'000'000'000},
                         kExactSecondsLimitPs - 1, kExactSecondsLimitPs, TimePs{-1'500}, kTimeNever,
                         TimePs{976'562'500}, TimePs{2'929'687'500}}) {
    EXPECT_EQ(integer_seconds(t), printf_seconds(t)) << t;
  }
  std::mt19937_64 rng(7);
  int ties_up = 0;
  int ties_down = 0;
  for (int i = 0; i < 400'000; ++i) {
    // Times of every magnitude up to the limit, and as many half-way ones.
    const int digits = 1 + static_cast<int>(rng() % 15);
    TimePs scale = 1;
    for (int d = 0; d < digits; ++d) scale *= 10;
    TimePs t = static_cast<TimePs>(rng() % static_cast<std::uint64_t>(scale));
    if (i % 2 == 0) t = t / 1000 * 1000 + 500;
    const std::string expected = printf_seconds(t);
    ASSERT_EQ(integer_seconds(t), expected) << t;
    if (t % 1000 == 500) {
      const int last_digit = expected.back() - '0';
      if (last_digit == static_cast<int>((t / 1000 + 1) % 10)) ++ties_up;
      if (last_digit == static_cast<int>(t / 1000 % 10)) ++ties_down;
    }
  }
  // Half-way times round both ways (the double lies on either side), so the
  // fma test is exercised, not only the plain rounding.
  EXPECT_GT(ties_up, 1000);
  EXPECT_GT(ties_down, 1000);
}

// Half-way times whose double is exact (t / 1e12 = j / 1024 s: t an odd
// multiple of 976 562 500 ps), which printf rounds half to even: every one
// below two seconds, then a spread of them up to the limit.
TEST(CsvTextTest, ExactlyHalfWayTimesRoundHalfToEven) {
  constexpr TimePs kExactTiePs = 976'562'500;
  int checked = 0;
  for (TimePs k = 1; k * kExactTiePs < kExactSecondsLimitPs; k += k < 2048 ? 2 : 2 * (k / 64)) {
    const TimePs t = k * kExactTiePs;  // k stays odd
    ASSERT_EQ(integer_seconds(t), printf_seconds(t)) << t;
    ++checked;
  }
  EXPECT_GT(checked, 1000);
  EXPECT_EQ(integer_seconds(2'929'687'500), "0.002929688");  // 2929687.5 ns, to even
  EXPECT_EQ(integer_seconds(976'562'500), "0.000976562");    // 976562.5 ns, to even
}

}  // namespace
}  // namespace safs
