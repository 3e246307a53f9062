// Helpers for runtime tests: an endpoint driven on its own thread, random
// payloads and their checksums, and a captured log.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <future>
#include <mutex>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "runtime/clock.h"
#include "runtime/endpoint.h"

namespace safs::runtime::testing {

inline constexpr std::int64_t kSecond = kNsPerSecond;
inline constexpr std::int64_t kMs = kNsPerMs;
inline constexpr double kMbps = 1e6;

inline std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::byte> bytes(n);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t word = rng();
    for (std::size_t j = 0; j < 8 && i + j < n; ++j) {
      bytes[i + j] = static_cast<std::byte>(word >> (8 * j));
    }
  }
  return bytes;
}

// FNV-1a, 64 bits: enough to catch a lost, duplicated or reordered chunk.
inline std::uint64_t checksum(std::span<const std::byte> bytes) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) hash = (hash ^ static_cast<std::uint8_t>(b)) * 0x100000001b3ull;
  return hash;
}

// Runs an endpoint's loop on a thread; call() runs code on that thread.
class LoopThread {
 public:
  explicit LoopThread(Endpoint& endpoint)
      : endpoint_(endpoint), thread_([this] { endpoint_.run(); }) {}
  ~LoopThread() { stop(); }
  void stop() {
    if (!thread_.joinable()) return;
    endpoint_.stop();
    thread_.join();
  }
  template <typename F>
  auto call(F f) {
    std::promise<decltype(f())> promise;
    auto future = promise.get_future();
    endpoint_.post([&] {
      if constexpr (std::is_void_v<decltype(f())>) {
        f();
        promise.set_value();
      } else {
        promise.set_value(f());
      }
    });
    return future.get();
  }
  EndpointStats stats() {
    return call([this] { return endpoint_.stats(); });
  }

 private:
  Endpoint& endpoint_;
  std::thread thread_;
};

class CapturedLog {
 public:
  std::function<void(std::string_view)> sink() {
    return [this](std::string_view line) {
      std::lock_guard lock(mutex_);
      lines_.emplace_back(line);
    };
  }
  bool contains(const std::string& text) {
    std::lock_guard lock(mutex_);
    for (const std::string& line : lines_) {
      if (line.find(text) != std::string::npos) return true;
    }
    return false;
  }
  std::string all() {
    std::lock_guard lock(mutex_);
    std::string text;
    for (const std::string& line : lines_) text += line + "\n";
    return text;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

inline EndpointConfig config_at(const std::string& host, double downlink_bps, CapturedLog* log) {
  EndpointConfig config;
  config.listen = {host, 0};
  config.downlink_bps = downlink_bps;
  config.security.insecure_loopback_only = true;  // tests run on loopback
  if (log != nullptr) config.log = log->sink();
  return config;
}

}  // namespace safs::runtime::testing
