#include "engine/event_heap.h"

#include <cassert>

namespace safs {

void EventHeap::push(const Event& event) {
  assert(event.at >= 0);  // the 128-bit key reads time as unsigned
  // Sift up with a hole instead of swaps.
  std::size_t hole = heap_.size();
  heap_.push_back(event);
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!runs_before(event, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = event;
}

Event EventHeap::pop() {
  const Event result = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n == 0) return result;
  std::size_t hole = 0;
  while (true) {
    const std::size_t first_child = hole * kArity + 1;
    if (first_child >= n) break;
    std::size_t best;
    if (first_child + kArity <= n) {
      // A tournament of two pairs: two independent comparisons, then one.
      best =
          earlier(earlier(first_child, first_child + 1), earlier(first_child + 2, first_child + 3));
    } else {
      best = first_child;
      for (std::size_t c = first_child + 1; c < n; ++c) best = earlier(best, c);
    }
    if (!runs_before(heap_[best], last)) break;
    heap_[hole] = heap_[best];
    hole = best;
  }
  heap_[hole] = last;
  return result;
}

}  // namespace safs
