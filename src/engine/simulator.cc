#include "engine/simulator.h"

#include <algorithm>

namespace safs {

void Simulator::run_until(TimePs stop_at) {
  stop_requested_ = false;
  while (!queue_.empty() && !stop_requested_) {
    if (queue_.top().at > stop_at) break;
    while (queue_.top().at > next_sample_at_) {
      sample_(next_sample_at_);
      next_sample_at_ += sample_period_;
    }
    const Event event = queue_.pop();
    // The next event's handler is most likely cold; fetch it while this one
    // runs.
    if (!queue_.empty()) {
      __builtin_prefetch(queue_.top().handler);
      __builtin_prefetch(queue_.top().touches);
    }
    now_ = event.at;
    running_id_ = event.id;
    ++events_processed_;
    event.handler->handle_event(event.id);
    if (events_processed_ >= next_progress_at_) {
      next_progress_at_ += progress_every_;
      progress_hook_();
    }
  }
  // Ran out of events up to the bound: so would every reserved one up to it
  // have run. Time still advances to the bound (never back).
  if (!stop_requested_ && stop_at >= now_) {
    if (sample_) sample_before_reserved(stop_at);
    now_ = stop_at != kTimeNever ? stop_at : std::max(now_, latest_reserved_at_);
    running_id_ = kEveryId;
  }
}

void Simulator::note_reserved_for_sampler(TimePs at) {
  // A reservation at or before now_ lies before an event that has run, whose
  // pop sampled the ticks before it.
  while (!reserved_ahead_.empty() && reserved_ahead_.top() <= now_) reserved_ahead_.pop();
  reserved_ahead_.push(at);
}

void Simulator::sample_before_reserved(TimePs stop_at) {
  TimePs last = -1;
  while (!reserved_ahead_.empty() && reserved_ahead_.top() <= stop_at) {
    last = reserved_ahead_.top();
    reserved_ahead_.pop();
  }
  while (last > next_sample_at_) {
    sample_(next_sample_at_);
    next_sample_at_ += sample_period_;
  }
}

void Simulator::set_progress_hook(std::uint64_t every_events, std::function<void()> hook) {
  progress_every_ = every_events > 0 ? every_events : 1;
  progress_hook_ = std::move(hook);
  next_progress_at_ = progress_hook_ ? events_processed_ + progress_every_ : kNoProgress;
}

void Simulator::set_sampler(TimePs period, std::function<void(TimePs)> sample) {
  sample_period_ = period > 0 ? period : 1;
  sample_ = std::move(sample);
  next_sample_at_ = sample_ ? (now_ / sample_period_ + 1) * sample_period_ : kTimeNever;
}

}  // namespace safs
