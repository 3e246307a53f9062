// The discrete-event loop. Components implement EventHandler and schedule
// themselves; the simulator pops events in (time, scheduling order).
#pragma once

#include <cstdint>

#include "engine/event_queue.h"
#include "engine/time.h"

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
  EventId schedule_at(TimePs at, EventHandler* handler) {
    const EventId id = ++last_id_;
    queue_.push(Event{at < now_ ? now_ : at, id, handler});
    return id;
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

  bool idle() const { return queue_.empty(); }
  std::uint64_t events_processed() const { return events_processed_; }
  std::size_t pending_events() const { return queue_.size(); }

 private:
  EventQueue queue_;
  TimePs now_ = 0;
  EventId last_id_ = 0;
  std::uint64_t events_processed_ = 0;
  bool stop_requested_ = false;
};

}  // namespace safs
