// A growable FIFO ring buffer. Unlike std::deque it keeps one allocation and
// never frees it, so steady-state push/pop allocates nothing.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace safs {

template <typename T>
class RingQueue {
 public:
  RingQueue() = default;
  RingQueue(const RingQueue&) = default;
  RingQueue& operator=(const RingQueue&) = default;
  // A moved-from ring is empty and usable again: its capacity goes with its
  // slots.
  RingQueue(RingQueue&& other) noexcept { *this = std::move(other); }
  RingQueue& operator=(RingQueue&& other) noexcept {
    slots_ = std::move(other.slots_);
    other.slots_.clear();
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
  void grow() {
    std::vector<T> bigger(capacity_ == 0 ? 16 : capacity_ * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = slots_[(head_ + i) & (capacity_ - 1)];
    slots_.swap(bigger);
    capacity_ = slots_.size();
    head_ = 0;
  }

  std::vector<T> slots_;      // size is a power of two
  std::size_t capacity_ = 0;  // slots_.size(), which divides by sizeof(T) to find it
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace safs
