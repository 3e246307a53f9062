// Deterministic random streams. Every component draws from its own stream,
// derived from the run seed and a stable stream key (a name and an index), so
// adding a flow or a link never shifts another component's draws.
#pragma once

#include <cmath>
#include <cstdint>
#include <string_view>

#include "base/time.h"

namespace safs {

// SplitMix64 (Steele, Lea, Flood 2014): the standard seeder for xoshiro.
constexpr std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A stable 64-bit hash (FNV-1a) for stream names; std::hash is not portable.
constexpr std::uint64_t stable_hash(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const char c : text) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return h;
}

// Mixes integers into one well-distributed key (used for ECMP hashing too).
constexpr std::uint64_t mix_keys(std::uint64_t a, std::uint64_t b) {
  std::uint64_t state = a ^ (b * 0xd6e8feb86659fd93ULL);
  return splitmix64(state);
}

// xoshiro256** 1.0 (Blackman and Vigna 2018).
class Rng {
 public:
  Rng(std::uint64_t run_seed, std::string_view stream, std::uint64_t index = 0) {
    std::uint64_t state = mix_keys(mix_keys(run_seed, stable_hash(stream)), index);
    for (auto& word : s_) word = splitmix64(state);
  }

  std::uint64_t next_u64() {
    const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  // Uniform in [0, 1) with 53 random bits.
  double uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias < 2^-64 * n).
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<Uint128>(next_u64()) * n) >> 64);
  }
  bool bernoulli(double p) { return uniform() < p; }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }
  // Standard normal (Box and Muller 1958): two uniforms per draw, the second
  // variate discarded, so every draw consumes the same amount of the stream.
  double normal() {
    const double radius = std::sqrt(-2.0 * std::log1p(-uniform()));
    return radius * std::cos(2.0 * kPi * uniform());
  }

 private:
  static constexpr double kPi = 3.14159265358979323846;
  static constexpr std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace safs
