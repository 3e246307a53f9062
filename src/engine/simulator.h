// The discrete-event loop. Components implement EventHandler and schedule
// themselves; the simulator pops events in (time, scheduling order).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>

#include "base/time.h"
#include "engine/event_queue.h"

namespace safs {

class EventHandler {
 public:
  virtual ~EventHandler() = default;
  // `id` is the value schedule_at returned, so a handler can tell its live
  // event from a superseded one (see Timer).
  virtual void handle_event(EventId id) = 0;
};

class Simulator {
 public:
  TimePs now() const { return now_; }

  // Schedules `handler` at absolute time `at` (clamped to now: no going back).
  // `touches`: what the handler will read first besides itself, fetched
  // ahead of time (a hint; null for none).
  EventId schedule_at(TimePs at, EventHandler* handler, const void* touches = nullptr) {
    const EventId id = ++last_id_;
    queue_.push(at < now_ ? now_ : at, id, handler, touches);
    return id;
  }
  // An event that may never be needed: reserve its place in the order now
  // (its id), and schedule it later only if it turns out to be needed.
  EventId reserve_id() { return ++last_id_; }
  // Schedules a reserved event; it runs where it would have run had it been
  // scheduled when reserved. `at` is not before now, and (at, id) not
  // before the running event (see ran_before_now).
  void schedule_reserved(TimePs at, EventId id, EventHandler* handler, const void* touches) {
    queue_.push(at, id, handler, touches);
  }
  // Whether an event at (at, id) would have run before the running one.
  bool ran_before_now(TimePs at, EventId id) const {
    return at < now_ || (at == now_ && id < running_id_);
  }
  EventId schedule_in(TimePs delay, EventHandler* handler) {
    return schedule_at(now_ + delay, handler);
  }

  // Runs events with time <= stop_at. Returns when stop() was called (now() is
  // then the stopping event's time) or every event up to stop_at has run
  // (now() is then stop_at, or unchanged if stop_at lies in the past).
  void run_until(TimePs stop_at);
  void run() { run_until(kTimeNever); }
  void stop() { stop_requested_ = true; }

  // Observers, for progress displays and samplers: called from the run loop,
  // not as events, so the event order and results are the same with or
  // without them. `hook` runs after every `every_events` events.
  void set_progress_hook(std::uint64_t every_events, std::function<void()> hook);
  // `sample(t)` runs for t = period, 2 period, ... once the next event lies
  // beyond t: it sees the state at simulated time t.
  void set_sampler(TimePs period, std::function<void(TimePs)> sample);

  bool idle() const { return queue_.empty(); }
  std::uint64_t events_processed() const { return events_processed_; }
  std::size_t pending_events() const { return queue_.size(); }

 private:
  EventQueue queue_;
  TimePs now_ = 0;
  EventId last_id_ = 0;
  EventId running_id_ = 0;  // the event running now, or the last one run
  std::uint64_t events_processed_ = 0;
  bool stop_requested_ = false;

  static constexpr std::uint64_t kNoProgress = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t progress_every_ = 0;
  std::uint64_t next_progress_at_ = kNoProgress;  // events_processed_ value
  std::function<void()> progress_hook_;
  TimePs sample_period_ = 0;
  TimePs next_sample_at_ = kTimeNever;
  std::function<void(TimePs)> sample_;
};

}  // namespace safs
