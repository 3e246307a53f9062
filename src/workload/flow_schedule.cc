#include "workload/flow_schedule.h"

#include <algorithm>

namespace safs {

FlowSchedule::FlowSchedule(Simulator& sim, Transport& transport, std::vector<FlowSpec> flows)
    : sim_(sim), transport_(transport), flows_(std::move(flows)) {
  std::stable_sort(flows_.begin(), flows_.end(), [](const FlowSpec& a, const FlowSpec& b) {
    return a.start_ps < b.start_ps || (a.start_ps == b.start_ps && a.id < b.id);
  });
}

void FlowSchedule::arm() {
  if (next_ < flows_.size()) sim_.schedule_at(flows_[next_].start_ps, this);
}

void FlowSchedule::handle_event(EventId /*id*/) {
  const TimePs now = sim_.now();
  while (next_ < flows_.size() && flows_[next_].start_ps <= now) {
    transport_.start_flow(flows_[next_++]);
  }
  arm();
}

}  // namespace safs
