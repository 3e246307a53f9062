#include "runtime/path_contention.h"

#include <algorithm>

namespace safs::runtime {

std::size_t GrantDelivery::bucket(double delivered_bytes, double allowed_bytes) {
  // Compared, not divided: a ratio of exactly 0.3 stays in 0.3's bucket.
  for (std::size_t tenths = 1; tenths < kBuckets; ++tenths) {
    if (delivered_bytes * 10 <= static_cast<double>(tenths) * allowed_bytes) return tenths - 1;
  }
  return kBuckets - 1;
}

GrantDelivery& GrantDelivery::operator+=(const GrantDelivery& other) {
  for (std::size_t i = 0; i < kBuckets; ++i) windows[i] += other.windows[i];
  lossy_windows += other.lossy_windows;
  queued_windows += other.queued_windows;
  max_queue_delay_ns = std::max(max_queue_delay_ns, other.max_queue_delay_ns);
  return *this;
}

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
  const bool judged = allowed_bytes_ >= static_cast<double>(config_.min_allowed_bytes);
  const bool lossy = retransmits_ > 0;
  const bool queued = max_queue_delay_ns_ >= config_.queue_delay_ns;
  if (judged) {
    ++delivery_.windows[GrantDelivery::bucket(delivered, allowed_bytes_)];
    delivery_.lossy_windows += lossy ? 1 : 0;
    delivery_.queued_windows += queued ? 1 : 0;
    delivery_.max_queue_delay_ns = std::max(delivery_.max_queue_delay_ns, max_queue_delay_ns_);
  }
  if (contended(now_ns)) {
    // Unpaced, the flows get what TCP wins. What their grants allow,
    // without loss or a queue: the capacity is back, pace them again.
    // (Short of it they stay unpaced; leaving at the shortfall ratio would
    // flap, since unpaced flows next to a competitor often make that
    // ratio. Behind the competitor's queue, a flow's last few kB, or a
    // grant lower than TCP's share, are reached with the competitor still
    // there.) A window without a granted flow says nothing.
    if (allowed_bytes_ > 0) {
      const bool recovered =
          !lossy && !queued && delivered >= config_.recovered_ratio * allowed_bytes_;
      if (recovered) contended_ = false;
      last_evidence_ns_ = now_ns;
    }
  } else if (judged && config_.enabled) {
    const bool short_of_grants = delivered < config_.shortfall_ratio * allowed_bytes_;
    short_windows_ = short_of_grants && (lossy || queued) ? short_windows_ + 1 : 0;
    if (short_windows_ >= config_.windows) {
      ++episodes_;
      contended_ = true;
      unpaced_delivery_bps_ = 0;  // an earlier episode's competitor may be gone
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
