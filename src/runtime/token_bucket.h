// A token bucket in bytes, for pacing in user space where the kernel will not
// (and for throttling the reads of a demoted sender). It keeps its debt: a
// write larger than the tokens left drives them negative, so large quanta do
// not raise the long-run rate (runtime.md: 16 KB quanta undershoot at 50 MB/s
// on 2 vCPUs; bigger quanta with debt do not).
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/clock.h"

namespace safs::runtime {

class TokenBucket {
 public:
  void set_rate(double bytes_per_second, std::int64_t now_ns) {
    refill(now_ns);
    rate_bytes_per_s_ = bytes_per_second;
    // Two milliseconds of tokens: about one epoll tick, so the loop never idles the flow.
    burst_bytes_ = std::max(kMinBurstBytes, bytes_per_second * 2e-3);
    tokens_ = std::min(tokens_, burst_bytes_);
  }
  // Bytes that may go now (0 while in debt).
  std::uint64_t available(std::int64_t now_ns) {
    refill(now_ns);
    return tokens_ <= 0 ? 0 : static_cast<std::uint64_t>(tokens_);
  }
  void consume(std::uint64_t bytes) { tokens_ -= static_cast<double>(bytes); }
  // When at least `bytes` tokens will be there (now if already).
  std::int64_t ready_at_ns(std::uint64_t bytes, std::int64_t now_ns) {
    refill(now_ns);
    const double missing = std::min(static_cast<double>(bytes), burst_bytes_) - tokens_;
    if (missing <= 0) return now_ns;
    if (rate_bytes_per_s_ <= 0) return kNeverNs;
    return now_ns + static_cast<std::int64_t>(missing / rate_bytes_per_s_ * 1e9) + 1;
  }
  double rate_bytes_per_s() const { return rate_bytes_per_s_; }

  static constexpr std::int64_t kNeverNs = INT64_MAX;

 private:
  static constexpr double kMinBurstBytes = 16 * 1024;
  void refill(std::int64_t now_ns) {
    if (last_ns_ != 0 && now_ns > last_ns_) {
      tokens_ = std::min(burst_bytes_, tokens_ + rate_bytes_per_s_ * 1e-9 *
                                                     static_cast<double>(now_ns - last_ns_));
    }
    last_ns_ = now_ns;
  }
  double rate_bytes_per_s_ = 0;
  double burst_bytes_ = kMinBurstBytes;
  double tokens_ = 0;
  std::int64_t last_ns_ = 0;
};

}  // namespace safs::runtime
