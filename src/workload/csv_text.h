// Fixed formatting for the CSV outputs, so that they are byte-identical
// across runs and machines.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/time.h"

namespace safs {

// Seconds with nanosecond digits ("%.9f"), the unit of every *_s column,
// appended to `out` (lines written once per flow make no temporary string).
inline void append_seconds(std::string& out, double seconds) {
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%.9f", seconds);
  out.append(buf, static_cast<std::size_t>(n));
}

// The same text for a time in picoseconds, by integer arithmetic: flows.csv
// writes four of these per flow, and printf's float path was 3% of a long
// AFD run. It must equal "%.9f" of ps_to_sec(t) to the byte. Below
// kExactSecondsLimitPs the double lies within 0.06 ps of t, so it rounds to
// the same nanosecond as t does unless t sits exactly half-way (t % 1000 ==
// 500). There printf rounds the double, and fma tells on which side of the
// half-way point it lies; when it lies on it (t a multiple of 976 562 500
// ps, so that t / 1e12 is a binary fraction), printf rounds half to even.
inline constexpr TimePs kExactSecondsLimitPs = 1'000'000'000'000'000;  // 1000 s
inline void append_seconds(std::string& out, TimePs t) {
  if (t < 0 || t >= kExactSecondsLimitPs) return append_seconds(out, ps_to_sec(t));
  std::uint64_t ns = static_cast<std::uint64_t>(t / 1000);
  const TimePs sub_ns_ps = t % 1000;
  if (sub_ns_ps > 500) {
    ++ns;
  } else if (sub_ns_ps == 500) {
    const double above_ps = std::fma(ps_to_sec(t), 1e12, -static_cast<double>(t));
    if (above_ps > 0 || (above_ps == 0 && ns % 2 == 1)) ++ns;
  }
  constexpr std::uint64_t kNsPerSec = 1'000'000'000;
  char buf[32];
  char* end = std::to_chars(buf, buf + sizeof buf, ns / kNsPerSec).ptr;
  *end++ = '.';
  std::uint64_t fraction = ns % kNsPerSec;
  for (int digit = 8; digit >= 0; --digit) {
    end[digit] = static_cast<char>('0' + fraction % 10);
    fraction /= 10;
  }
  out.append(buf, static_cast<std::size_t>(end + 9 - buf));
}

// Whether `c` cannot stand in an unquoted CSV field as the outputs write
// them (labels in ops.csv): a comma, a quote or a control character.
inline bool breaks_csv_field(char c) {
  return c == ',' || c == '"' || static_cast<unsigned char>(c) < 0x20;
}

inline std::string seconds_text(double seconds) {
  std::string text;
  append_seconds(text, seconds);
  return text;
}
inline std::string seconds_text(TimePs t) {
  std::string text;
  append_seconds(text, t);
  return text;
}

}  // namespace safs
