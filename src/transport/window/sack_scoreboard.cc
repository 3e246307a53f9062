#include "transport/window/sack_scoreboard.h"

#include <algorithm>

namespace safs {

std::uint64_t SackScoreboard::length(std::uint64_t segment) const {
  const std::uint64_t start = segment * segment_bytes_;
  return std::min<std::uint64_t>(segment_bytes_, flow_bytes_ - start);
}

void SackScoreboard::advance(std::uint64_t una) {
  const std::uint64_t first = (una + segment_bytes_ - 1) / segment_bytes_;
  for (; base_ < first && base_ < end_; ++base_) {
    std::uint8_t& f = flags(base_);
    const std::uint64_t bytes = length(base_);
    if (f & kSacked) sacked_bytes_ -= bytes;
    if (f & kLost) lost_bytes_ -= bytes;
    if (f & kRetransmitted) retrans_bytes_ -= bytes;
    f = 0;
  }
  if (base_ < first) base_ = end_ = first;  // after go-back-N the receiver may be ahead
  lost_frontier_ = std::max(lost_frontier_, base_);
  if (high_sacked_ != kNone && high_sacked_ < base_) high_sacked_ = kNone;
  if (resend_ != kNone && resend_ < base_) find_next_resend(base_);
}

void SackScoreboard::reserve(std::uint64_t seq) {
  const std::uint64_t segment = seq / segment_bytes_;
  if (segment < end_) return;
  if (segment - base_ >= ring_.size()) {
    // Grow to the next power of two and re-place the live segments.
    std::size_t size = std::max<std::size_t>(64, ring_.size());
    while (segment - base_ >= size) size *= 2;
    std::vector<std::uint8_t> grown(size, 0);
    for (std::uint64_t i = base_; i < end_; ++i) grown[i & (size - 1)] = flags(i);
    ring_ = std::move(grown);
  }
  end_ = segment + 1;
}

std::uint64_t SackScoreboard::sack(std::uint64_t seq, std::uint32_t dupthresh) {
  const std::uint64_t segment = seq / segment_bytes_;
  if (segment < base_ || segment >= end_) return 0;
  std::uint8_t& f = flags(segment);
  if (f & kSacked) return 0;
  const std::uint64_t bytes = length(segment);
  if (f & kLost) lost_bytes_ -= bytes;
  if (f & kRetransmitted) retrans_bytes_ -= bytes;
  f = kSacked;
  sacked_bytes_ += bytes;
  if (high_sacked_ == kNone || segment > high_sacked_) high_sacked_ = segment;

  // Holes below the dupthresh-th SACKed segment from the top are lost.
  std::uint32_t above = 0;
  std::uint64_t i = high_sacked_ + 1;
  while (i > lost_frontier_ && above < dupthresh) {
    --i;
    if (flags(i) & kSacked) ++above;
  }
  if (above < dupthresh) return bytes;
  for (std::uint64_t hole = lost_frontier_; hole < i; ++hole) set_lost(hole);
  lost_frontier_ = std::max(lost_frontier_, i);
  return bytes;
}

void SackScoreboard::set_lost(std::uint64_t segment) {
  std::uint8_t& f = flags(segment);
  if (f & (kSacked | kLost)) return;
  f |= kLost;
  lost_bytes_ += length(segment);
  if (resend_ == kNone || segment < resend_) resend_ = segment;
}

void SackScoreboard::mark_lost(std::uint64_t seq) {
  const std::uint64_t segment = seq / segment_bytes_;
  if (segment < base_ || segment >= end_) return;
  std::uint8_t& f = flags(segment);
  if (f & kRetransmitted) return;  // already resent: the timer covers it
  set_lost(segment);
}

void SackScoreboard::retransmitted(std::uint64_t seq) {
  const std::uint64_t segment = seq / segment_bytes_;
  std::uint8_t& f = flags(segment);
  if (!(f & kRetransmitted)) {
    f |= kRetransmitted;
    retrans_bytes_ += length(segment);
  }
  if (segment == resend_) find_next_resend(segment + 1);
}

void SackScoreboard::find_next_resend(std::uint64_t from) {
  resend_ = kNone;
  const std::uint64_t until = std::min(end_, lost_frontier_ + 1);
  for (std::uint64_t i = std::max(from, base_); i < until; ++i) {
    const std::uint8_t f = flags(i);
    if ((f & kLost) && !(f & (kSacked | kRetransmitted))) {
      resend_ = i;
      return;
    }
  }
}

void SackScoreboard::mark_outstanding_lost() {
  for (std::uint64_t i = base_; i < end_; ++i) {
    std::uint8_t& f = flags(i);
    if (f & kRetransmitted) retrans_bytes_ -= length(i);
    f &= static_cast<std::uint8_t>(~kRetransmitted);
    set_lost(i);
  }
  lost_frontier_ = end_;
  find_next_resend(base_);
}

std::uint64_t SackScoreboard::last_unsacked() const {
  for (std::uint64_t i = end_; i > base_;) {
    --i;
    if (!(flags(i) & kSacked)) return i * segment_bytes_;
  }
  return kNoSegment;
}

void SackScoreboard::mark_unsacked_lost_below(std::uint64_t seq) {
  const std::uint64_t until = std::min(end_, seq / segment_bytes_);
  for (std::uint64_t i = base_; i < until; ++i) set_lost(i);
  lost_frontier_ = std::max(lost_frontier_, until);
}

void SackScoreboard::clear() {
  for (std::uint64_t i = base_; i < end_; ++i) flags(i) = 0;
  end_ = base_;
  high_sacked_ = kNone;
  lost_frontier_ = base_;
  resend_ = kNone;
  sacked_bytes_ = lost_bytes_ = retrans_bytes_ = 0;
}

}  // namespace safs
