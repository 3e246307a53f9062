// Holds one data socket to a rate: kernel TCP pacing (SO_MAX_PACING_RATE,
// which TCP honours without fq: docs/runtime.md, "Data path") when the kernel
// takes it, a user-space token bucket otherwise. Also keeps the socket's
// not-sent low-water mark at about two milliseconds of the rate, so a new
// rate acts within milliseconds instead of after a full send buffer drains.
//
// A socket once given a finite SO_MAX_PACING_RATE stays paced by TCP itself
// for the rest of its life, at TCP's own rate (about 1.2 times the congestion
// window per smoothed RTT) when the limit is lifted again: Linux's
// sk_setsockopt() only ever moves sk_pacing_status from SK_PACING_NONE to
// SK_PACING_NEEDED (net/core/sock.c; the rate: tcp_update_pacing_rate() and
// net.ipv4.tcp_pacing_ca_ratio). kernel_rate_set() says whether this Pacer did
// that, so that a connection which must go unpaced can avoid such sockets.
#pragma once

#include <cstdint>
#include <limits>

#include "runtime/token_bucket.h"

namespace safs::runtime {

enum class PacingMode : std::uint8_t { kAuto, kKernel, kUserspace };

class Pacer {
 public:
  static constexpr double kUnpaced = std::numeric_limits<double>::infinity();
  // The least it lets a paced flow write at once: a receiver hears from a
  // flow paced at r no more often than every kMinWriteBytes / r.
  static constexpr std::uint64_t kMinWriteBytes = 4096;

  // kAuto tries the kernel and falls back to user space if refused.
  // `kernel_rate_set`: an earlier Pacer on fd already set a kernel rate.
  Pacer(int fd, PacingMode mode, bool kernel_rate_set = false);

  // kUnpaced: as fast as TCP goes. 0: send nothing. The socket's not-sent
  // low-water mark follows `buffered_bps` (kUnpaced: 4 MB).
  void set_rate(double rate_bps, std::int64_t now_ns, double buffered_bps);
  void set_rate(double rate_bps, std::int64_t now_ns) { set_rate(rate_bps, now_ns, rate_bps); }
  double rate_bps() const { return rate_bps_; }
  double buffered_bps() const { return buffered_bps_; }
  bool kernel_paced() const { return kernel_; }
  // A finite rate went to the kernel, by this Pacer or an earlier one on the
  // socket: TCP paces the socket for good.
  bool kernel_rate_set() const { return kernel_rate_set_; }

  // Bytes the caller may write now.
  std::uint64_t allowance(std::int64_t now_ns);
  // Only bytes the bucket paced are its debt. Bytes the kernel paced, or
  // that went unpaced, must not be: a flow that wrote megabytes at a rate
  // above the kernel floor and is then lowered below it would otherwise owe
  // them all at the new rate, and stall for seconds (it stalled a flow
  // lowered from 92 to 22 Mbit/s until its receiver gave it up as a ghost).
  void on_written(std::uint64_t bytes) {
    if (bucket_paced_) bucket_.consume(bytes);
  }
  // When allowance() will next be worth a write (kNeverNs while paused).
  std::int64_t next_write_ns(std::int64_t now_ns);

 private:
  int fd_;
  bool kernel_ = false;
  bool bucket_paced_ = false;  // the bucket holds the rate (user space, or below the kernel floor)
  bool kernel_rate_set_ = false;
  double rate_bps_ = kUnpaced;
  double buffered_bps_ = kUnpaced;
  TokenBucket bucket_;
};

}  // namespace safs::runtime
