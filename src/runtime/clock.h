// The runtime's one clock: CLOCK_MONOTONIC in nanoseconds, and its conversion
// to the core's picoseconds. Only intervals cross hosts (slack, leases), never
// instants, so hosts need no synchronised clocks.
#pragma once

#include <cstdint>
#include <ctime>

#include "core/types.h"

namespace safs::runtime {

inline constexpr std::int64_t kNsPerUs = 1'000;
inline constexpr std::int64_t kNsPerMs = 1'000'000;
inline constexpr std::int64_t kNsPerSecond = 1'000'000'000;

inline std::int64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * kNsPerSecond + ts.tv_nsec;
}

inline TimePs to_core_ps(std::int64_t ns) { return ns * kPsPerNs; }
inline std::int64_t from_core_ps(TimePs ps) { return ps / kPsPerNs; }

}  // namespace safs::runtime
