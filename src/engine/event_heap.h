// A 4-ary min-heap of timed events. Events with equal time pop in the order
// they were scheduled (a monotonically increasing sequence number breaks ties),
// which makes every run deterministic. EventQueue keeps in it the events that
// lie beyond its calendar; bench/event_queue_bench.cc compares it with
// htsim's std::multimap and a binary heap; see bench/README.md.
#pragma once

#include <cstdint>
#include <vector>

#include "base/time.h"

namespace safs {

class EventHandler;

using EventId = std::uint64_t;  // unique per simulator, never 0

struct Event {
  TimePs at;
  EventId id;  // scheduling order; the tie-breaker for equal `at`
  EventHandler* handler;
  // Memory the handler will read first besides itself (may be null): the
  // run loop fetches it while the event before runs.
  const void* touches = nullptr;
};

// The order events run in: by time, then by scheduling order. (at, id) is
// compared as one 128-bit key, without a branch: a heap's comparisons are as
// good as random to a branch predictor. Times are never negative.
// (__extension__: a GCC and Clang type, not ISO C++.)
inline bool runs_before(const Event& a, const Event& b) {
  __extension__ using Key = unsigned __int128;
  const auto key = [](const Event& e) {
    return (static_cast<Key>(static_cast<std::uint64_t>(e.at)) << 64) | e.id;
  };
  return key(a) < key(b);
}

class EventHeap {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void push(const Event& event);
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  // Index of the earlier of heap_[i] and heap_[j], chosen by a mask rather
  // than `? :`, which the compiler may turn back into a branch.
  std::size_t earlier(std::size_t i, std::size_t j) const {
    const std::size_t j_first = runs_before(heap_[j], heap_[i]);
    return i ^ ((i ^ j) & (0 - j_first));
  }
  static constexpr std::size_t kArity = 4;

  std::vector<Event> heap_;
};

}  // namespace safs
