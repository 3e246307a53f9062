// Receiver-side record of which fixed-size segments of a flow have arrived.
// It makes delivery exactly-once: a segment counts the first time only, and
// the cumulative point (next byte expected) advances over contiguous segments.
// Segments below the cumulative point have all arrived and need no bit; those
// above it are a SegmentWindow, so memory follows the reordering span (the
// bytes in flight), not the flow's size.
#pragma once

#include <cstdint>

#include "transport/common/segment_window.h"

namespace safs {

class SegmentTracker {
 public:
  SegmentTracker() = default;
  SegmentTracker(std::uint64_t size_bytes, std::uint32_t segment_bytes)
      : size_bytes_(size_bytes),
        segment_bytes_(segment_bytes),
        segments_((size_bytes + segment_bytes - 1) / segment_bytes) {}

  // Records the segment starting at byte `seq`. Returns false for a duplicate.
  bool add(std::uint64_t seq) {
    const std::uint64_t index = seq / segment_bytes_;
    if (has(index)) return false;
    pending_.insert(index);
    delivered_bytes_ += segment_length(index);
    std::uint64_t first_missing = pending_.floor();
    while (first_missing < segments_ && pending_.contains(first_missing)) ++first_missing;
    pending_.raise_floor(first_missing);
    return true;
  }

  bool has(std::uint64_t index) const {
    return index < pending_.floor() || pending_.contains(index);
  }
  std::uint64_t segment_length(std::uint64_t index) const {
    const std::uint64_t begin = index * segment_bytes_;
    return size_bytes_ - begin < segment_bytes_ ? size_bytes_ - begin : segment_bytes_;
  }
  // Next byte expected in order (the cumulative ACK).
  std::uint64_t cumulative_bytes() const {
    const std::uint64_t b = pending_.floor() * segment_bytes_;
    return b < size_bytes_ ? b : size_bytes_;
  }
  std::uint64_t delivered_bytes() const { return delivered_bytes_; }
  bool complete() const { return pending_.floor() == segments_; }
  // Segments held above the cumulative point (memory, in bits): the widest
  // span of out-of-order arrivals seen, rounded up to a power of two.
  std::uint64_t ring_segments() const { return pending_.capacity(); }

 private:
  std::uint64_t size_bytes_ = 0;
  std::uint32_t segment_bytes_ = 1;
  std::uint64_t segments_ = 0;
  SegmentWindow pending_;  // arrived above the cumulative point; its floor is that point
  std::uint64_t delivered_bytes_ = 0;
};

}  // namespace safs
