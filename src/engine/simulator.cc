#include "engine/simulator.h"

namespace safs {

void Simulator::run_until(TimePs stop_at) {
  stop_requested_ = false;
  while (!queue_.empty() && !stop_requested_) {
    if (queue_.top().at > stop_at) {
      now_ = stop_at;
      return;
    }
    const Event event = queue_.pop();
    now_ = event.at;
    ++events_processed_;
    event.handler->handle_event(event.id);
  }
}

}  // namespace safs
