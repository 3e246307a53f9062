#include "runtime/path_contention.h"

#include <algorithm>

namespace safs::runtime {

void PathContention::add(double allowed_bytes, std::uint64_t delivered_bytes,
                         std::uint32_t retransmits, std::int64_t queue_delay_ns,
                         std::int64_t now_ns) {
  close_window_if_due(now_ns);
  allowed_bytes_ += allowed_bytes;
  delivered_bytes_ += delivered_bytes;
  retransmits_ += retransmits;
  max_queue_delay_ns_ = std::max(max_queue_delay_ns_, queue_delay_ns);
}

bool PathContention::contended(std::int64_t now_ns) const {
  return config_.enabled && contended_ && now_ns - last_evidence_ns_ < config_.memory_ns;
}

void PathContention::close_window_if_due(std::int64_t now_ns) {
  if (window_start_ns_ < 0) window_start_ns_ = now_ns;
  if (now_ns - window_start_ns_ < config_.window_ns) return;
  const double delivered = static_cast<double>(delivered_bytes_);
  if (contended(now_ns)) {
    // Unpaced, the flows get what TCP wins. What their grants allow,
    // however small: the capacity is back, pace them again. (Short of it
    // they stay unpaced; leaving at the shortfall ratio would flap, since
    // unpaced flows next to a competitor often make that ratio.) A window
    // without a granted flow says nothing.
    if (allowed_bytes_ > 0) {
      if (delivered >= config_.recovered_ratio * allowed_bytes_) contended_ = false;
      last_evidence_ns_ = now_ns;
    }
  } else if (allowed_bytes_ >= static_cast<double>(config_.min_allowed_bytes)) {
    const bool congested = retransmits_ > 0 || max_queue_delay_ns_ >= config_.queue_delay_ns;
    const bool short_of_grants = delivered < config_.shortfall_ratio * allowed_bytes_;
    short_windows_ = short_of_grants && congested ? short_windows_ + 1 : 0;
    if (short_windows_ >= config_.windows) {
      ++episodes_;
      contended_ = true;
      last_evidence_ns_ = now_ns;
      short_windows_ = 0;
    }
  }
  window_start_ns_ = now_ns;
  allowed_bytes_ = 0;
  delivered_bytes_ = 0;
  retransmits_ = 0;
  max_queue_delay_ns_ = 0;
}

void GrantReached::add(double allowed_bytes, std::uint64_t delivered_bytes, std::int64_t now_ns) {
  allowed_bytes_ += allowed_bytes;
  delivered_bytes_ += delivered_bytes;
  if (now_ns - window_start_ns_ < window_ns_) return;
  reached_ = allowed_bytes_ > 0 &&
             static_cast<double>(delivered_bytes_) >= recovered_ratio_ * allowed_bytes_;
  window_start_ns_ = now_ns;
  allowed_bytes_ = 0;
  delivered_bytes_ = 0;
}

}  // namespace safs::runtime
