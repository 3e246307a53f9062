#include "runtime/tools/payload.h"

namespace safs::rt {

std::vector<std::byte> pattern(std::uint64_t bytes, std::uint64_t seed) {
  std::vector<std::byte> data(bytes);
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;  // xorshift64
  for (auto& b : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  return data;
}

std::uint64_t checksum(std::span<const std::byte> bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) hash = (hash ^ static_cast<std::uint8_t>(b)) * 0x100000001b3ull;
  return hash;
}

}  // namespace safs::rt
