// A re-armable, cancellable timer on top of the event queue.
//
// Cancellation is lazy: the timer remembers the id of its one live event and
// ignores any other. Re-arming to a *later* time (the common case: a
// retransmission timeout pushed back by every ACK) schedules nothing; the
// early event fires, sees the deadline moved, and re-queues itself once. So
// re-arming later never adds events; only re-arming earlier leaves the old
// event behind (stale, ignored when it pops).
#pragma once

#include <functional>
#include <utility>

#include "engine/simulator.h"

namespace safs {

class Timer final : public EventHandler {
 public:
  Timer(Simulator& sim, std::function<void()> on_fire) : sim_(sim), on_fire_(std::move(on_fire)) {}
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;

  void arm_at(TimePs at) {
    deadline_ = at;
    if (live_event_ != 0 && queued_at_ <= at) return;  // fires early, then re-queues
    queued_at_ = at < sim_.now() ? sim_.now() : at;
    live_event_ = sim_.schedule_at(queued_at_, this);
    ++queued_events_;
  }
  void arm_in(TimePs delay) { arm_at(sim_.now() + delay); }
  void cancel() { deadline_ = kTimeNever; }

  bool armed() const { return deadline_ != kTimeNever; }
  // No event of this timer is in the queue, live or stale: its owner may be
  // destroyed (the queue would otherwise call a freed handler).
  bool idle() const { return queued_events_ == 0; }
  TimePs deadline() const { return deadline_; }

  void handle_event(EventId id) override {
    --queued_events_;
    if (id != live_event_) return;  // superseded
    live_event_ = 0;
    if (deadline_ == kTimeNever) return;  // cancelled
    if (sim_.now() < deadline_) {
      queued_at_ = deadline_;
      live_event_ = sim_.schedule_at(deadline_, this);
      ++queued_events_;
      return;
    }
    deadline_ = kTimeNever;
    on_fire_();
  }

 private:
  Simulator& sim_;
  std::function<void()> on_fire_;
  TimePs deadline_ = kTimeNever;
  TimePs queued_at_ = kTimeNever;
  EventId live_event_ = 0;
  std::uint32_t queued_events_ = 0;
};

}  // namespace safs
