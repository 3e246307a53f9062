#include "engine/event_queue.h"

namespace safs {

void EventQueue::push(const Event& event) {
  // Sift up with a hole instead of swaps.
  std::size_t hole = heap_.size();
  heap_.push_back(event);
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!before(event, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = event;
}

Event EventQueue::pop() {
  const Event result = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return result;
  std::size_t hole = 0;
  while (true) {
    const std::size_t first_child = hole * kArity + 1;
    if (first_child >= n) break;
    const std::size_t end = first_child + kArity < n ? first_child + kArity : n;
    std::size_t best = first_child;
    for (std::size_t c = first_child + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], last)) break;
    heap_[hole] = heap_[best];
    hole = best;
  }
  heap_[hole] = last;
  return result;
}

}  // namespace safs
