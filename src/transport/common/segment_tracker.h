// Receiver-side record of which fixed-size segments of a flow have arrived.
// It makes delivery exactly-once: a segment counts the first time only, and
// the cumulative point (next byte expected) advances over contiguous segments.
// One bit per segment, allocated when the flow starts.
#pragma once

#include <cstdint>
#include <vector>

namespace safs {

class SegmentTracker {
 public:
  SegmentTracker() = default;
  SegmentTracker(std::uint64_t size_bytes, std::uint32_t segment_bytes)
      : size_bytes_(size_bytes),
        segment_bytes_(segment_bytes),
        segments_((size_bytes + segment_bytes - 1) / segment_bytes),
        bits_((segments_ + 63) / 64, 0) {}

  // Records the segment starting at byte `seq`. Returns false for a duplicate.
  bool add(std::uint64_t seq) {
    const std::uint64_t index = seq / segment_bytes_;
    std::uint64_t& word = bits_[index / 64];
    const std::uint64_t bit = std::uint64_t{1} << (index % 64);
    if ((word & bit) != 0) return false;
    word |= bit;
    delivered_bytes_ += segment_length(index);
    while (first_missing_ < segments_ && has(first_missing_)) ++first_missing_;
    return true;
  }

  bool has(std::uint64_t index) const { return (bits_[index / 64] >> (index % 64)) & 1u; }
  std::uint64_t segment_length(std::uint64_t index) const {
    const std::uint64_t begin = index * segment_bytes_;
    return size_bytes_ - begin < segment_bytes_ ? size_bytes_ - begin : segment_bytes_;
  }
  // Next byte expected in order (the cumulative ACK).
  std::uint64_t cumulative_bytes() const {
    const std::uint64_t b = first_missing_ * segment_bytes_;
    return b < size_bytes_ ? b : size_bytes_;
  }
  std::uint64_t delivered_bytes() const { return delivered_bytes_; }
  bool complete() const { return first_missing_ == segments_; }

 private:
  std::uint64_t size_bytes_ = 0;
  std::uint32_t segment_bytes_ = 1;
  std::uint64_t segments_ = 0;
  std::vector<std::uint64_t> bits_;
  std::uint64_t first_missing_ = 0;
  std::uint64_t delivered_bytes_ = 0;
};

}  // namespace safs
