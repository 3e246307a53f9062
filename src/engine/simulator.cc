#include "engine/simulator.h"

namespace safs {

void Simulator::run_until(TimePs stop_at) {
  stop_requested_ = false;
  while (!queue_.empty() && !stop_requested_) {
    if (queue_.top().at > stop_at) break;
    const Event event = queue_.pop();
    now_ = event.at;
    ++events_processed_;
    event.handler->handle_event(event.id);
  }
  // Ran out of events before the bound: time still advances to it (never back).
  if (!stop_requested_ && stop_at != kTimeNever && stop_at > now_) now_ = stop_at;
}

}  // namespace safs
