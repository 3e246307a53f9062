// A set of segment indices at or above a floor that only moves up, kept as
// bits in a ring that doubles when an index lands beyond its reach and never
// shrinks. Memory follows the span above the floor (the bytes in flight),
// not the flow's size, and a flow's steady state allocates nothing.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace safs {

class SegmentWindow {
 public:
  // Indices below the floor are never members.
  bool contains(std::uint64_t index) const {
    if (index < floor_ || index - floor_ >= capacity()) return false;
    return (word(index) & bit(index)) != 0;
  }
  void insert(std::uint64_t index) {  // index >= floor()
    while (index - floor_ >= capacity()) grow();
    word(index) |= bit(index);
  }
  void erase(std::uint64_t index) {
    if (contains(index)) word(index) &= ~bit(index);
  }
  // Moves the floor up to `floor`, dropping every member below it.
  void raise_floor(std::uint64_t floor) {
    for (; floor_ < floor; ++floor_) erase(floor_);
  }
  std::uint64_t floor() const { return floor_; }
  // Indices the ring can hold above the floor: its memory, in bits.
  std::uint64_t capacity() const { return ring_.size() * 64; }

 private:
  // Index i lives at bit i mod capacity(), for i in [floor_, floor_ + capacity()).
  std::uint64_t& word(std::uint64_t index) { return ring_[(index / 64) % ring_.size()]; }
  std::uint64_t word(std::uint64_t index) const { return ring_[(index / 64) % ring_.size()]; }
  static std::uint64_t bit(std::uint64_t index) { return std::uint64_t{1} << (index % 64); }

  // Doubles the ring (one word to start), moving every member to its new place.
  void grow() {
    SegmentWindow old;  // takes the ring itself, not a copy of it: one allocation, not two
    old.ring_ = std::move(ring_);
    old.floor_ = floor_;
    ring_.assign(old.ring_.empty() ? 1 : old.ring_.size() * 2, 0);
    for (std::uint64_t i = floor_; i < floor_ + old.capacity(); ++i) {
      if (old.contains(i)) word(i) |= bit(i);
    }
  }

  std::vector<std::uint64_t> ring_;
  std::uint64_t floor_ = 0;
};

}  // namespace safs
