// Detects a sender that ignores its grants: it counts one flow's arriving
// bytes per window and compares them with the largest rate granted during
// the window, or before a decrease less than decrease_grace_ns ago (bytes
// sent at the old rate are still on their way). Windows in which the flow
// held no grant from start to end (its unscheduled burst, or a fallback) are
// not judged.
#pragma once

#include <algorithm>
#include <cstdint>

#include "runtime/endpoint_config.h"

namespace safs::runtime {

class OverrunDetector {
 public:
  explicit OverrunDetector(const EnforcementConfig& config) : config_(config) {}

  void on_grant(double rate_bps, std::int64_t now_ns) {
    if (!granted_) window_start_ns_ = now_ns;  // judge only whole granted windows
    if (granted_ && rate_bps < current_bps_) {
      grace_bps_ = now_ns < grace_until_ns_ ? std::max(grace_bps_, current_bps_) : current_bps_;
      grace_until_ns_ = now_ns + config_.decrease_grace_ns;
    }
    granted_ = true;
    window_max_bps_ = std::max(window_max_bps_, rate_bps);
    current_bps_ = rate_bps;
  }
  void on_bytes(std::uint64_t bytes) { window_bytes_ += bytes; }

  // Closes the window if it is over. True once the sender has overrun for
  // `windows` consecutive windows.
  bool tick(std::int64_t now_ns) {
    if (!granted_ || now_ns < window_start_ns_ + config_.window_ns) return false;
    const double seconds = static_cast<double>(now_ns - window_start_ns_) * 1e-9;
    const double allowed_bps =
        std::max(window_max_bps_, window_start_ns_ < grace_until_ns_ ? grace_bps_ : 0.0);
    const double limit_bytes =
        allowed_bps / 8 * seconds * config_.ratio + static_cast<double>(config_.allowance_bytes);
    last_window_bps_ = static_cast<double>(window_bytes_) * 8 / seconds;
    strikes_ = static_cast<double>(window_bytes_) > limit_bytes ? strikes_ + 1 : 0;
    window_start_ns_ = now_ns;
    window_bytes_ = 0;
    window_max_bps_ = current_bps_;
    return strikes_ >= config_.windows;
  }
  double last_window_bps() const { return last_window_bps_; }

 private:
  EnforcementConfig config_;
  bool granted_ = false;
  std::int64_t window_start_ns_ = 0;
  std::uint64_t window_bytes_ = 0;
  double window_max_bps_ = 0;
  double current_bps_ = 0;
  double grace_bps_ = 0;  // the rate before the last decrease
  std::int64_t grace_until_ns_ = 0;
  double last_window_bps_ = 0;
  int strikes_ = 0;
};

}  // namespace safs::runtime
