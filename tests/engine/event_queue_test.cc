// EventQueue ordering and the Simulator's run loop.
#include "engine/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "engine/rng.h"
#include "engine/simulator.h"

namespace safs {
namespace {

// Runs a function on every event it receives and records when it ran.
class Callback final : public EventHandler {
 public:
  explicit Callback(std::function<void(EventId)> fn) : fn_(std::move(fn)) {}
  void handle_event(EventId id) override { fn_(id); }

 private:
  std::function<void(EventId)> fn_;
};

// Records (time, tag) of every event it receives; the tag is the event id.
class Recorder final : public EventHandler {
 public:
  explicit Recorder(Simulator& sim) : sim_(sim) {}
  void handle_event(EventId id) override { seen.emplace_back(sim_.now(), id); }
  std::vector<std::pair<TimePs, EventId>> seen;

 private:
  Simulator& sim_;
};

TEST(EventQueueTest, EmptyAndSize) {
  EventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  q.push(Event{5, 1, nullptr});
  q.push(Event{3, 2, nullptr});
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.top().at, 3);
  EXPECT_EQ(q.top().id, 2u);
  EXPECT_EQ(q.pop().id, 2u);
  EXPECT_EQ(q.size(), 1u);
  EXPECT_EQ(q.pop().id, 1u);
  EXPECT_TRUE(q.empty());
}

TEST(EventQueueTest, PopsInTimeOrder) {
  EventQueue q;
  const std::vector<TimePs> times = {50, 10, 40, 0, 30, 20, 70, 60, 90, 80, 5, 15};
  EventId id = 0;
  for (const TimePs t : times) q.push(Event{t, ++id, nullptr});
  std::vector<TimePs> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  std::vector<TimePs> popped;
  while (!q.empty()) popped.push_back(q.pop().at);
  EXPECT_EQ(popped, sorted);
}

TEST(EventQueueTest, EqualTimesPopInSchedulingOrder) {
  EventQueue q;
  // Pushed in id order but mixed with other times; ties must come out by id.
  for (EventId id = 1; id <= 20; ++id) q.push(Event{id % 2 == 0 ? 7 : 3, id, nullptr});
  std::vector<EventId> popped;
  while (!q.empty()) popped.push_back(q.pop().id);
  std::vector<EventId> expected;
  for (EventId id = 1; id <= 20; id += 2) expected.push_back(id);  // t = 3
  for (EventId id = 2; id <= 20; id += 2) expected.push_back(id);  // t = 7
  EXPECT_EQ(popped, expected);
}

// Thousands of random times with many ties: the pop order must equal a
// stable sort of the push order by time.
TEST(EventQueueTest, MatchesStableSortWithManyTies) {
  for (const std::uint64_t distinct_times : {1u, 7u, 50u, 1000u}) {
    Rng rng(2024, "event-queue-test", distinct_times);
    constexpr int kEvents = 5000;
    std::vector<Event> events;
    EventQueue q;
    for (int i = 0; i < kEvents; ++i) {
      const Event e{static_cast<TimePs>(rng.below(distinct_times)), static_cast<EventId>(i + 1),
                    nullptr};
      events.push_back(e);
      q.push(e);
    }
    std::stable_sort(events.begin(), events.end(),
                     [](const Event& a, const Event& b) { return a.at < b.at; });
    ASSERT_EQ(q.size(), events.size());
    for (const Event& expected : events) {
      const Event got = q.pop();
      ASSERT_EQ(got.at, expected.at) << "distinct_times=" << distinct_times;
      ASSERT_EQ(got.id, expected.id) << "distinct_times=" << distinct_times;
    }
    EXPECT_TRUE(q.empty());
  }
}

// Interleaved pushes and pops (the hold model) against std::multimap, whose
// insert places equal keys after the existing ones: the same tie rule.
TEST(EventQueueTest, InterleavedPushPopMatchesMultimap) {
  Rng rng(7, "event-queue-interleaved");
  EventQueue q;
  std::multimap<TimePs, EventId> reference;
  EventId next_id = 0;
  TimePs now = 0;
  for (int i = 0; i < 1000; ++i) {
    const TimePs t = static_cast<TimePs>(rng.below(100));
    q.push(Event{t, ++next_id, nullptr});
    reference.emplace(t, next_id);
  }
  for (int step = 0; step < 20000; ++step) {
    if (rng.below(3) != 0 || q.empty()) {
      // New events never lie before the last popped time, as in a simulator.
      const TimePs t = now + static_cast<TimePs>(rng.below(20));
      q.push(Event{t, ++next_id, nullptr});
      reference.emplace(t, next_id);
    } else {
      const Event got = q.pop();
      const auto it = reference.begin();
      ASSERT_EQ(got.at, it->first) << "step " << step;
      ASSERT_EQ(got.id, it->second) << "step " << step;
      now = got.at;
      reference.erase(it);
    }
    ASSERT_EQ(q.size(), reference.size());
  }
  while (!q.empty()) {
    const Event got = q.pop();
    ASSERT_EQ(got.id, reference.begin()->second);
    reference.erase(reference.begin());
  }
  EXPECT_TRUE(reference.empty());
}

// The calendar's own paths against std::multimap: events within its window
// (the same picosecond, one bucket, many buckets), beyond it (the heap),
// before it (a queue used outside a simulator may go back in time), long
// runs that wrap the ring many times, and sparse stretches it must skip.
TEST(EventQueueTest, CalendarAndHeapTogetherMatchMultimap) {
  struct Scale {
    const char* name;
    TimePs max_increment_ps;
    int back_in_time_percent;  // pushes before the last popped time
  };
  const Scale scales[] = {
      {"same bucket", 100, 0},
      {"next nanoseconds", 5'000, 0},
      {"about one window", 3 * kPsPerUs, 0},
      {"far beyond it", 5 * kPsPerMs, 0},
      {"back in time too", 3 * kPsPerUs, 10},
  };
  for (const Scale& scale : scales) {
    Rng rng(11, "event-queue-calendar", static_cast<std::uint64_t>(scale.max_increment_ps));
    EventQueue q;
    std::multimap<TimePs, EventId> reference;
    EventId next_id = 0;
    TimePs now = 0;
    const auto push = [&](TimePs t) {
      q.push(Event{t, ++next_id, nullptr});
      reference.emplace(t, next_id);
      // The queue tracks which side holds the front as it goes.
      ASSERT_EQ(q.top().id, reference.begin()->second) << scale.name << ", push of " << t;
    };
    for (int step = 0; step < 60000; ++step) {
      // Mostly near times, now and then one far ahead, as timers are.
      if (q.empty() || rng.below(5) < 3) {
        TimePs t = now + static_cast<TimePs>(
                             rng.below(static_cast<std::uint64_t>(scale.max_increment_ps) + 1));
        if (rng.below(50) == 0) t += static_cast<TimePs>(rng.below(kPsPerMs));
        if (static_cast<int>(rng.below(100)) < scale.back_in_time_percent) {
          t = static_cast<TimePs>(rng.below(static_cast<std::uint64_t>(now) + 1));
        }
        push(t);
        if (rng.below(4) == 0) push(t);  // a tie
      } else {
        ASSERT_EQ(q.top().id, reference.begin()->second) << scale.name << ", step " << step;
        const Event got = q.pop();
        ASSERT_EQ(got.at, reference.begin()->first) << scale.name << ", step " << step;
        ASSERT_EQ(got.id, reference.begin()->second) << scale.name << ", step " << step;
        now = got.at;
        reference.erase(reference.begin());
      }
      ASSERT_EQ(q.size(), reference.size());
    }
    while (!q.empty()) {
      ASSERT_EQ(q.pop().id, reference.begin()->second) << scale.name;
      reference.erase(reference.begin());
    }
    EXPECT_TRUE(reference.empty()) << scale.name;
    EXPECT_GT(now, 0) << scale.name;
  }
}

// Two events pending, `gap` apart, popped and renewed over and over: each pop
// must find the other however far it is. The gaps straddle the calendar's
// 128 ps buckets, its 64-bucket bit words, its 4096-bucket groups of words
// and its 16384-bucket window (the last bucket in it, the first past it), and
// the run wraps the ring of buckets many times.
TEST(EventQueueTest, FindsTheNextEventAtAnyDistance) {
  constexpr TimePs kBucketPs = 128;
  for (const TimePs gap :
       {TimePs{0}, TimePs{1}, kBucketPs - 1, kBucketPs, 64 * kBucketPs + 5, 4096 * kBucketPs,
        16383 * kBucketPs, 16384 * kBucketPs, 3 * 4096 * kBucketPs + 77, kPsPerMs}) {
    EventQueue q;
    EventId id = 0;
    TimePs last_pushed = 0;
    q.push(Event{0, ++id, nullptr});
    q.push(Event{last_pushed = gap, ++id, nullptr});
    for (int step = 0; step < 200; ++step) {
      const Event got = q.pop();
      ASSERT_EQ(got.id, id - 1) << "gap " << gap << ", step " << step;
      ASSERT_EQ(q.top().id, id) << "gap " << gap << ", step " << step;
      last_pushed += gap;
      q.push(Event{last_pushed, ++id, nullptr});
      ASSERT_EQ(q.size(), 2u);
    }
  }
}

TEST(EventQueueTest, KeepsHandlerPointer) {
  EventQueue q;
  Simulator sim;
  Recorder a(sim);
  Recorder b(sim);
  q.push(Event{2, 1, &a});
  q.push(Event{1, 2, &b});
  EXPECT_EQ(q.pop().handler, &b);
  EXPECT_EQ(q.pop().handler, &a);
}

TEST(SimulatorTest, RunsEventsInTimeThenSchedulingOrder) {
  Simulator sim;
  Recorder rec(sim);
  const EventId a = sim.schedule_at(30, &rec);
  const EventId b = sim.schedule_at(10, &rec);
  const EventId c = sim.schedule_at(30, &rec);
  const EventId d = sim.schedule_at(20, &rec);
  EXPECT_EQ(sim.pending_events(), 4u);
  sim.run();
  const std::vector<std::pair<TimePs, EventId>> expected = {{10, b}, {20, d}, {30, a}, {30, c}};
  EXPECT_EQ(rec.seen, expected);
  EXPECT_EQ(sim.now(), 30);
  EXPECT_EQ(sim.events_processed(), 4u);
  EXPECT_TRUE(sim.idle());
}

TEST(SimulatorTest, EventIdsAreUniqueAndNonZero) {
  Simulator sim;
  Recorder rec(sim);
  std::vector<EventId> ids;
  for (int i = 0; i < 100; ++i) ids.push_back(sim.schedule_at(i % 3, &rec));
  for (const EventId id : ids) EXPECT_NE(id, 0u);
  std::vector<EventId> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
  // The handler is told the id that schedule_at returned.
  sim.run();
  std::vector<EventId> seen;
  for (const auto& [t, id] : rec.seen) seen.push_back(id);
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, sorted);
}

TEST(SimulatorTest, RunUntilStopsAtBoundAndSetsNow) {
  Simulator sim;
  Recorder rec(sim);
  sim.schedule_at(10, &rec);
  sim.schedule_at(25, &rec);  // exactly at the bound: runs
  sim.schedule_at(26, &rec);
  sim.schedule_at(40, &rec);
  sim.run_until(25);
  ASSERT_EQ(rec.seen.size(), 2u);
  EXPECT_EQ(rec.seen[0].first, 10);
  EXPECT_EQ(rec.seen[1].first, 25);
  EXPECT_EQ(sim.now(), 25);
  EXPECT_EQ(sim.pending_events(), 2u);

  sim.run_until(30);  // the next event (26) runs, then now() is the bound
  ASSERT_EQ(rec.seen.size(), 3u);
  EXPECT_EQ(rec.seen[2].first, 26);
  EXPECT_EQ(sim.now(), 30);
  EXPECT_EQ(sim.pending_events(), 1u);

  sim.run();
  ASSERT_EQ(rec.seen.size(), 4u);
  EXPECT_EQ(rec.seen[3].first, 40);
  EXPECT_EQ(sim.now(), 40);
}

TEST(SimulatorTest, RunUntilBeforeFirstEventOnlyAdvancesTime) {
  Simulator sim;
  Recorder rec(sim);
  sim.schedule_at(1000, &rec);
  sim.run_until(999);
  EXPECT_TRUE(rec.seen.empty());
  EXPECT_EQ(sim.now(), 999);
  EXPECT_EQ(sim.events_processed(), 0u);
  // Scheduling relative to the new now().
  sim.schedule_in(5, &rec);    // 1004, after the event at 1000
  sim.schedule_in(-10, &rec);  // negative delay: clamped to now
  sim.run();
  ASSERT_EQ(rec.seen.size(), 3u);
  EXPECT_EQ(rec.seen[0].first, 999);
  EXPECT_EQ(rec.seen[1].first, 1000);
  EXPECT_EQ(rec.seen[2].first, 999 + 5);
}

TEST(SimulatorTest, StopEndsTheRunAndRunResumes) {
  Simulator sim;
  std::vector<TimePs> ran;
  Callback cb([&](EventId) {
    ran.push_back(sim.now());
    if (ran.size() == 2) sim.stop();  // after the first event at 20
  });
  for (const TimePs t : {10, 20, 20, 30}) sim.schedule_at(t, &cb);
  sim.run();
  EXPECT_EQ(ran, (std::vector<TimePs>{10, 20}));
  EXPECT_EQ(sim.now(), 20);
  EXPECT_EQ(sim.pending_events(), 2u);
  // A new run clears the stop request.
  sim.run();
  EXPECT_EQ(ran, (std::vector<TimePs>{10, 20, 20, 30}));
  EXPECT_EQ(sim.now(), 30);
}

TEST(SimulatorTest, StopInsideRunUntilKeepsEventTime) {
  Simulator sim;
  std::vector<TimePs> ran;
  Callback cb([&](EventId) {
    ran.push_back(sim.now());
    sim.stop();
  });
  sim.schedule_at(5, &cb);
  sim.schedule_at(6, &cb);
  sim.run_until(100);
  EXPECT_EQ(ran, (std::vector<TimePs>{5}));
  EXPECT_EQ(sim.now(), 5);  // not advanced to the bound
}

TEST(SimulatorTest, ScheduleInThePastIsClampedToNow) {
  Simulator sim;
  std::vector<TimePs> ran;
  Callback late([&](EventId) { ran.push_back(sim.now()); });
  Callback first([&](EventId) {
    sim.schedule_at(3, &late);  // in the past
    sim.schedule_in(0, &late);
  });
  sim.schedule_at(100, &first);
  sim.run();
  EXPECT_EQ(ran, (std::vector<TimePs>{100, 100}));
  EXPECT_EQ(sim.now(), 100);
}

TEST(SimulatorTest, EventsScheduledDuringHandlingRunAfterQueuedTies) {
  Simulator sim;
  std::vector<int> order;
  Callback b([&](EventId) { order.push_back(2); });
  Callback c([&](EventId) { order.push_back(3); });
  Callback a([&](EventId) {
    order.push_back(1);
    sim.schedule_in(0, &c);  // same time, but scheduled after b
  });
  sim.schedule_at(50, &a);
  sim.schedule_at(50, &b);
  sim.run();
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3}));
}

TEST(SimulatorTest, ManyRandomEventsRunInNonDecreasingTime) {
  Simulator sim;
  Rng rng(11, "sim-random");
  TimePs last = -1;
  std::uint64_t handled = 0;
  bool monotone = true;
  Callback cb([&](EventId) {
    monotone = monotone && sim.now() >= last;
    last = sim.now();
    ++handled;
    if (handled < 50000) sim.schedule_in(static_cast<TimePs>(rng.below(1000)), &cb);
  });
  for (int i = 0; i < 100; ++i) sim.schedule_at(static_cast<TimePs>(rng.below(1000)), &cb);
  sim.run();
  EXPECT_TRUE(monotone);
  EXPECT_EQ(handled, 50000u + 99u);
  EXPECT_EQ(sim.events_processed(), handled);
}

// The heap compares (time, id) as one 128-bit key: times across the whole
// range (up to kTimeNever) and ids past 32 bits must keep the same order.
TEST(EventQueueTest, OrdersTimesAndIdsAcrossTheirWholeRange) {
  const std::vector<TimePs> times = {
      kTimeNever, 0, TimePs{1} << 62, 1, kTimeNever - 1, TimePs{1} << 32, (TimePs{1} << 32) - 1};
  const std::vector<EventId> ids = {EventId{1} << 40, 3, (EventId{1} << 63) + 5,
                                    (EventId{1} << 32) - 1};
  EventQueue q;
  std::vector<std::pair<TimePs, EventId>> expected;
  for (const TimePs t : times) {
    for (const EventId id : ids) {
      q.push(Event{t, id, nullptr});
      expected.emplace_back(t, id);
    }
  }
  std::sort(expected.begin(), expected.end());
  for (const auto& [t, id] : expected) {
    const Event got = q.pop();
    ASSERT_EQ(got.at, t);
    ASSERT_EQ(got.id, id);
  }
  EXPECT_TRUE(q.empty());
}

}  // namespace
}  // namespace safs
