// A growable FIFO ring buffer. Unlike std::deque it keeps one allocation and
// never frees it, so steady-state push/pop allocates nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <stdexcept>
#include <utility>

namespace safs {

template <typename T>
class RingQueue {
 public:
  RingQueue() = default;
  RingQueue(const RingQueue& other) { *this = other; }
  RingQueue& operator=(const RingQueue& other) {
    if (this == &other) return *this;
    slots_ = other.capacity_ == 0 ? nullptr : std::make_unique<T[]>(other.capacity_);
    capacity_ = other.capacity_;
    head_ = 0;
    size_ = other.size_;
    for (std::uint32_t i = 0; i < size_; ++i) slots_[i] = other.at(i);
    return *this;
  }
  // A moved-from ring is empty and usable again: its capacity goes with its
  // slots.
  RingQueue(RingQueue&& other) noexcept { *this = std::move(other); }
  RingQueue& operator=(RingQueue&& other) noexcept {
    slots_ = std::move(other.slots_);
    capacity_ = std::exchange(other.capacity_, 0);
    head_ = std::exchange(other.head_, 0);
    size_ = std::exchange(other.size_, 0);
    return *this;
  }

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return slots_[head_]; }

  void push_back(const T& value) {
    if (size_ == capacity_) grow();
    slots_[(head_ + size_) & (capacity_ - 1)] = value;
    ++size_;
  }
  T pop_front() {
    T value = slots_[head_];
    head_ = (head_ + 1) & (capacity_ - 1);
    --size_;
    return value;
  }

 private:
  const T& at(std::uint32_t i) const { return slots_[(head_ + i) & (capacity_ - 1)]; }
  void grow() {
    if (capacity_ > std::numeric_limits<std::uint32_t>::max() / 2) {
      throw std::length_error("RingQueue: more than 2^31 entries");
    }
    const std::uint32_t bigger_capacity = capacity_ == 0 ? 16 : capacity_ * 2;
    auto bigger = std::make_unique<T[]>(bigger_capacity);
    for (std::uint32_t i = 0; i < size_; ++i) bigger[i] = at(i);
    slots_ = std::move(bigger);
    capacity_ = bigger_capacity;
    head_ = 0;
  }

  // A pointer and three 32-bit counts: 24 bytes, half of a vector's three
  // pointers and three sizes.
  std::unique_ptr<T[]> slots_;  // capacity_ of them, a power of two
  std::uint32_t capacity_ = 0;
  std::uint32_t head_ = 0;
  std::uint32_t size_ = 0;
};

}  // namespace safs
