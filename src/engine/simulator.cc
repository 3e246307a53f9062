#include "engine/simulator.h"

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
  // Ran out of events before the bound: time still advances to it (never back).
  if (!stop_requested_ && stop_at != kTimeNever && stop_at > now_) now_ = stop_at;
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
