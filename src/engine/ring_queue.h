// A growable FIFO ring buffer. Unlike std::deque it keeps one allocation and
// never frees it, so steady-state push/pop allocates nothing.
#pragma once

#include <cstddef>
#include <vector>

namespace safs {

template <typename T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  T& front() { return slots_[head_]; }

  void push_back(const T& value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = value;
    ++size_;
  }
  T pop_front() {
    T value = slots_[head_];
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return value;
  }

 private:
  void grow() {
    std::vector<T> bigger(slots_.empty() ? 16 : slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = slots_[(head_ + i) & (slots_.size() - 1)];
    slots_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> slots_;  // size is a power of two
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace safs
