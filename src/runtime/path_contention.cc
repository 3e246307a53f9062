#include "runtime/path_contention.h"

#include <algorithm>

namespace safs::runtime {

void PathContention::add_allowed(double allowed_bytes, std::uint32_t retransmits,
                                 std::int64_t queue_delay_ns, std::int64_t now_ns) {
  close_window_if_due(now_ns);
  allowed_bytes_ += allowed_bytes;
  retransmits_ += retransmits;
  max_queue_delay_ns_ = std::max(max_queue_delay_ns_, queue_delay_ns);
}

void PathContention::add_written(std::uint64_t bytes, std::int64_t now_ns) {
  close_window_if_due(now_ns);
  written_bytes_ += bytes;
}

bool PathContention::contended(std::int64_t now_ns) const {
  return config_.enabled && contended_ && now_ns - last_evidence_ns_ < config_.memory_ns;
}

void PathContention::close_window_if_due(std::int64_t now_ns) {
  if (window_start_ns_ < 0) window_start_ns_ = now_ns;
  if (now_ns - window_start_ns_ < config_.window_ns) return;
  if (allowed_bytes_ >= static_cast<double>(config_.min_allowed_bytes)) {
    const double written = static_cast<double>(written_bytes_);
    const bool congested = retransmits_ > 0 || max_queue_delay_ns_ >= config_.queue_delay_ns;
    if (contended(now_ns)) {
      // Unpaced, the flows get what TCP wins. All their grants allow, and
      // the capacity is back: pace them again. (Short of it they stay
      // unpaced; leaving at the shortfall ratio instead would flap, since
      // unpaced flows next to a competitor often make that ratio.)
      if (written >= allowed_bytes_) contended_ = false;
      last_evidence_ns_ = now_ns;
    } else if (written < config_.shortfall_ratio * allowed_bytes_ && congested) {
      ++episodes_;
      contended_ = true;
      last_evidence_ns_ = now_ns;
    }
  }
  window_start_ns_ = now_ns;
  allowed_bytes_ = 0;
  written_bytes_ = 0;
  retransmits_ = 0;
  max_queue_delay_ns_ = 0;
}

}  // namespace safs::runtime
