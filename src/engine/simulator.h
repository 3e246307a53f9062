// The discrete-event loop. Components implement EventHandler and schedule
// themselves; the simulator pops events in (time, scheduling order).
#pragma once

#include <cassert>
#include <cstdint>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

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
  // An event at `at` that may turn out to do nothing (a NIC's completion
  // when its source has nothing ready): reserve its place in the order, its
  // id, now, and schedule it later only if it is needed. One never scheduled
  // is as an event that did nothing: the run ends at the same time and
  // samplers see the same ticks as if it had run (they see reservations
  // made while they are set).
  EventId reserve_id(TimePs at) {
    if (at < now_) at = now_;
    if (at > latest_reserved_at_) latest_reserved_at_ = at;
    if (sample_) note_reserved_for_sampler(at);
    return ++last_id_;
  }
  // Schedules a reserved event; it runs where it would have run had it been
  // scheduled when reserved. (at, id) must not have passed (ran_before_now).
  void schedule_reserved(TimePs at, EventId id, EventHandler* handler, const void* touches) {
    assert(!ran_before_now(at, id));
    queue_.push(at, id, handler, touches);
  }
  // Whether an event at (at, id) would have run by now: before the event
  // running now, or, between runs, up to where the last run stopped.
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
  // The event running now, or the last one run; kEveryId when a run has
  // ended with every event up to now_ run, reserved ones included.
  EventId running_id_ = 0;
  static constexpr EventId kEveryId = std::numeric_limits<EventId>::max();
  TimePs latest_reserved_at_ = 0;
  // While a sampler is set: the times of reservations still ahead of now_,
  // at most one per NIC (earliest first), for the ticks at a run's end.
  std::priority_queue<TimePs, std::vector<TimePs>, std::greater<>> reserved_ahead_;
  void note_reserved_for_sampler(TimePs at);
  // At the end of a run up to stop_at: the ticks before the last reserved
  // event up to stop_at, which the sampler would have seen had it run.
  void sample_before_reserved(TimePs stop_at);
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
