#include "runtime/pacer.h"

#include <algorithm>
#include <cmath>

#include "runtime/socket_ops.h"

namespace safs::runtime {
namespace {

constexpr double kLowatSeconds = 2e-3;  // about one grant interval of bytes
constexpr double kMinLowatBytes = 16 * 1024;
constexpr double kMaxLowatBytes = 4 * 1024 * 1024;
constexpr std::uint64_t kKernelUnlimited = ~0ull;  // SO_MAX_PACING_RATE "no limit"
// Kernel pacing is earliest-departure-time: each TSO packet (at least two
// segments, 2 x 64 KB on loopback) delays the next by its size over the rate
// in force when it left. A new, higher rate therefore waits out the old slow
// one, up to seconds at a few kB/s. Below this floor the kernel paces at the
// floor and the user-space bucket holds the flow to its rate, so a stall
// lasts at most 2 x 64 KB / 10 MB/s = 13 ms.
constexpr double kKernelFloorBytesPerSecond = 10e6;

}  // namespace

Pacer::Pacer(int fd, PacingMode mode, bool kernel_rate_set)
    : fd_(fd), kernel_rate_set_(kernel_rate_set) {
  if (mode != PacingMode::kUserspace) kernel_ = set_pacing_rate(fd_, kKernelUnlimited);
  set_notsent_lowat(fd_, static_cast<std::uint32_t>(kMaxLowatBytes));
}

void Pacer::set_rate(double rate_bps, std::int64_t now_ns, double buffered_bps) {
  rate_bps_ = rate_bps;
  buffered_bps_ = buffered_bps;
  const bool unpaced = std::isinf(rate_bps);
  const double bytes_per_s = unpaced ? 0 : std::max(0.0, rate_bps / 8);
  bucket_paced_ = !unpaced && (!kernel_ || bytes_per_s < kKernelFloorBytesPerSecond);
  if (kernel_) {
    // A zero pacing rate would stall the socket; a pause is done by not writing.
    const double kernel_rate = std::max(bytes_per_s, kKernelFloorBytesPerSecond);
    set_pacing_rate(fd_, unpaced ? kKernelUnlimited : static_cast<std::uint64_t>(kernel_rate));
    kernel_rate_set_ = kernel_rate_set_ || !unpaced;
  }
  if (bucket_paced_) bucket_.set_rate(bytes_per_s, now_ns);
  const double lowat =
      std::isinf(buffered_bps) ? kMaxLowatBytes : std::max(0.0, buffered_bps / 8) * kLowatSeconds;
  set_notsent_lowat(fd_,
                    static_cast<std::uint32_t>(std::clamp(lowat, kMinLowatBytes, kMaxLowatBytes)));
}

std::uint64_t Pacer::allowance(std::int64_t now_ns) {
  if (rate_bps_ <= 0) return 0;
  if (!bucket_paced_) return ~0ull;
  return bucket_.available(now_ns);
}

std::int64_t Pacer::next_write_ns(std::int64_t now_ns) {
  if (rate_bps_ <= 0) return TokenBucket::kNeverNs;
  if (!bucket_paced_) return now_ns;
  return bucket_.ready_at_ns(kMinWriteBytes, now_ns);
}

}  // namespace safs::runtime
