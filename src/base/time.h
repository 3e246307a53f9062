// The one vocabulary for time, shared by every layer (the policy core, the
// simulator and the runtime): signed 64-bit integer picoseconds, about 106
// days of range, on the caller's clock (simulated time, or CLOCK_MONOTONIC in
// the runtime). Depends on nothing.
#pragma once

#include <cstdint>
#include <limits>

namespace safs {

__extension__ using Uint128 = unsigned __int128;  // GCC/Clang builtin, for exact products

using TimePs = std::int64_t;

inline constexpr TimePs kPsPerNs = 1'000;
inline constexpr TimePs kPsPerUs = 1'000'000;
inline constexpr TimePs kPsPerMs = 1'000'000'000;
inline constexpr TimePs kPsPerSec = 1'000'000'000'000;
inline constexpr TimePs kTimeNever = std::numeric_limits<TimePs>::max();

constexpr TimePs ns_to_ps(double ns) {
  return static_cast<TimePs>(ns * 1e3 + (ns >= 0 ? 0.5 : -0.5));
}
constexpr TimePs us_to_ps(double us) {
  return static_cast<TimePs>(us * 1e6 + (us >= 0 ? 0.5 : -0.5));
}
constexpr TimePs ms_to_ps(double ms) {
  return static_cast<TimePs>(ms * 1e9 + (ms >= 0 ? 0.5 : -0.5));
}
constexpr TimePs sec_to_ps(double s) {
  return static_cast<TimePs>(s * 1e12 + (s >= 0 ? 0.5 : -0.5));
}
constexpr double ps_to_sec(TimePs t) { return static_cast<double>(t) / 1e12; }
constexpr double ps_to_us(TimePs t) { return static_cast<double>(t) / 1e6; }

// Time to put `bytes` on a wire of `rate_bps`, rounded up to a whole
// picosecond, in 128 bits: exact for any rate and size, also past what
// TimePs holds (a caller can check before it narrows).
constexpr Uint128 serialization_ps_wide(std::uint64_t bytes, std::uint64_t rate_bps) {
  const Uint128 bits_ps = static_cast<Uint128>(bytes) * 8u * 1'000'000'000'000u;
  return (bits_ps + rate_bps - 1) / rate_bps;
}

// The same as TimePs: exact for any rate and any size up to 2^56 bytes.
constexpr TimePs serialization_ps(std::uint64_t bytes, std::uint64_t rate_bps) {
  return static_cast<TimePs>(serialization_ps_wide(bytes, rate_bps));
}

}  // namespace safs
