// A 4-ary min-heap of timed events. Events with equal time pop in the order
// they were scheduled (a monotonically increasing sequence number breaks ties),
// which makes every run deterministic. bench/event_queue_bench.cc compares it
// with htsim's std::multimap and a binary heap; see bench/README.md.
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

class EventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  const Event& top() const { return heap_.front(); }

  void push(const Event& event);
  Event pop();
  void reserve(std::size_t n) { heap_.reserve(n); }

 private:
  static bool before(const Event& a, const Event& b) {
    return a.at < b.at || (a.at == b.at && a.id < b.id);
  }
  static constexpr std::size_t kArity = 4;

  std::vector<Event> heap_;
};

}  // namespace safs
