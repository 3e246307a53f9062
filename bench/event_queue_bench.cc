// The classic "hold" model (Vaucher and Duval 1975; Jones 1986): keep N
// events pending; each operation pops the earliest and schedules a new one at
// its time plus a random increment. Compared:
//   - safs::EventQueue (a calendar of the next 2.1 us and a heap beyond),
//   - safs::EventHeap (the 4-ary heap alone, (time, seq) order),
//   - std::multimap<TimePs, payload>, as in htsim's EventList,
//   - std::priority_queue (binary heap) with the same (time, seq) order.
// Increments come from safs::Rng, drawn before timing starts, and are reused
// cyclically, so the timed loop measures only the queue.
//
// Run: build/bin/event_queue_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

#include "base/time.h"
#include "engine/event_queue.h"
#include "engine/rng.h"

namespace safs {
namespace {

constexpr TimePs kMeanIncrementPs = kPsPerUs;
constexpr std::size_t kIncrements = std::size_t{1} << 16;  // power of two

enum Distribution : std::int64_t { kExponential = 0, kUniform = 1 };

// Pre-drawn increments, mean kMeanIncrementPs, shared by all queue types so
// every queue sees the same sequence of times.
const std::vector<TimePs>& increments(Distribution dist) {
  static const auto make = [](Distribution d) {
    Rng rng(1, d == kExponential ? "hold-exponential" : "hold-uniform");
    std::vector<TimePs> out(kIncrements);
    for (TimePs& inc : out) {
      const double x = d == kExponential
                           ? rng.exponential(static_cast<double>(kMeanIncrementPs))
                           : 2.0 * static_cast<double>(kMeanIncrementPs) * rng.uniform();
      inc = static_cast<TimePs>(x);
    }
    return out;
  };
  static const std::vector<TimePs> exponential = make(kExponential);
  static const std::vector<TimePs> uniform = make(kUniform);
  return dist == kExponential ? exponential : uniform;
}

// The payload an event carries (a handler pointer in the simulator).
using Payload = void*;

struct HeapEvent {
  TimePs at;
  std::uint64_t seq;
  Payload payload;
};
struct Later {
  bool operator()(const HeapEvent& a, const HeapEvent& b) const {
    return a.at > b.at || (a.at == b.at && a.seq > b.seq);
  }
};

// Adapters with a common push/pop interface.
template <typename Queue>  // safs::EventQueue or safs::EventHeap
class SafsQueue {
 public:
  void reserve(std::size_t n) { q_.reserve(n); }
  void push(TimePs at) { q_.push(Event{at, ++seq_, nullptr}); }
  TimePs pop() { return q_.pop().at; }
  std::size_t size() const { return q_.size(); }

 private:
  Queue q_;
  EventId seq_ = 0;
};

class MultimapQueue {  // htsim: std::multimap<simtime_picosec, EventSource*>
 public:
  void reserve(std::size_t /*n*/) {}
  void push(TimePs at) { q_.emplace(at, nullptr); }
  TimePs pop() {
    const auto it = q_.begin();
    const TimePs at = it->first;
    q_.erase(it);
    return at;
  }
  std::size_t size() const { return q_.size(); }

 private:
  std::multimap<TimePs, Payload> q_;
};

class BinaryHeapQueue {
 public:
  void reserve(std::size_t n) {
    std::vector<HeapEvent> storage;
    storage.reserve(n);
    q_ = std::priority_queue<HeapEvent, std::vector<HeapEvent>, Later>(Later{}, std::move(storage));
  }
  void push(TimePs at) { q_.push(HeapEvent{at, ++seq_, nullptr}); }
  TimePs pop() {
    const TimePs at = q_.top().at;
    q_.pop();
    return at;
  }
  std::size_t size() const { return q_.size(); }

 private:
  std::priority_queue<HeapEvent, std::vector<HeapEvent>, Later> q_;
  std::uint64_t seq_ = 0;
};

// A queue in the steady state of the hold model with N pending events.
// Google Benchmark calls a benchmark function several times per argument set
// (to size the iteration count), and filling and warming a 10^6-event
// multimap takes seconds, so the last prepared queue of each type is kept and
// reused: the hold model is stationary, so continuing it is fair.
template <typename Queue>
struct HoldState {
  std::size_t n = 0;
  Distribution dist = kExponential;
  std::unique_ptr<Queue> queue;
  std::size_t cursor = 0;  // next increment to use
};

template <typename Queue>
HoldState<Queue>& prepared(std::size_t n, Distribution dist) {
  static HoldState<Queue> state;
  if (state.queue != nullptr && state.n == n && state.dist == dist) return state;
  state.queue.reset();  // free the previous one first
  state.queue = std::make_unique<Queue>();
  state.n = n;
  state.dist = dist;
  state.cursor = 0;
  const std::vector<TimePs>& inc = increments(dist);
  Queue& queue = *state.queue;
  queue.reserve(n + 1);
  for (std::size_t k = 0; k < n; ++k) queue.push(inc[state.cursor++ & (kIncrements - 1)]);
  // Warm up towards the steady-state time distribution.
  for (std::size_t k = 0; k < n; ++k) {
    queue.push(queue.pop() + inc[state.cursor++ & (kIncrements - 1)]);
  }
  return state;
}

// state.range(0): pending events N; state.range(1): Distribution.
template <typename Queue>
void BM_Hold(benchmark::State& state) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto dist = static_cast<Distribution>(state.range(1));
  HoldState<Queue>& hold = prepared<Queue>(n, dist);
  Queue& queue = *hold.queue;
  const TimePs* inc = increments(dist).data();
  std::size_t i = hold.cursor;

  for (auto _ : state) {
    const TimePs now = queue.pop();
    queue.push(now + inc[i++ & (kIncrements - 1)]);
    benchmark::DoNotOptimize(now);
  }
  hold.cursor = i;
  if (queue.size() != n) state.SkipWithError("queue size changed");
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  state.SetLabel(dist == kExponential ? "exponential" : "uniform");
}

void HoldArgs(benchmark::internal::Benchmark* b) {
  b->ArgNames({"N", "dist"});
  for (const std::int64_t dist : {kExponential, kUniform}) {
    for (const std::int64_t n : {1'000, 10'000, 100'000, 1'000'000}) b->Args({n, dist});
  }
  b->MinTime(0.2);
}

BENCHMARK(BM_Hold<SafsQueue<EventQueue>>)->Name("Hold/safs::EventQueue")->Apply(HoldArgs);
BENCHMARK(BM_Hold<SafsQueue<EventHeap>>)->Name("Hold/safs::EventHeap")->Apply(HoldArgs);
BENCHMARK(BM_Hold<MultimapQueue>)->Name("Hold/std::multimap")->Apply(HoldArgs);
BENCHMARK(BM_Hold<BinaryHeapQueue>)->Name("Hold/std::priority_queue")->Apply(HoldArgs);

}  // namespace
}  // namespace safs

BENCHMARK_MAIN();
