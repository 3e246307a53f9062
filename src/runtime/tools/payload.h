// The bytes safs-rt sends and the checks both ends print: a pattern from the
// tag, its FNV-1a checksum (as the runtime's tests compute it), and whether
// a transfer met its deadline.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace safs::rt {

std::vector<std::byte> pattern(std::uint64_t bytes, std::uint64_t seed);
std::uint64_t checksum(std::span<const std::byte> bytes);
// No deadline (slack 0: background) is met by finishing at all.
inline bool deadline_met(double fct_ms, double slack_ms) {
  return slack_ms <= 0 || fct_ms <= slack_ms;
}

}  // namespace safs::rt
