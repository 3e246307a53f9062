#include "workload/flow_schedule.h"

#include <algorithm>

namespace safs {

std::unique_ptr<Workload> make_workload(const ListedFlows& spec, WorkloadHost& host) {
  std::vector<FlowSpec> flows;
  flows.reserve(spec.flows.size());
  for (const FlowSpec& flow : spec.flows) flows.push_back(host.register_flow(flow, {}));
  return std::make_unique<FlowSchedule>(host.sim(), host.transport(), std::move(flows));
}

std::string describe_workload(const ListedFlows& spec) {
  return std::to_string(spec.flows.size()) + " listed flows";
}

FlowSchedule::FlowSchedule(Simulator& sim, Transport& transport, std::vector<FlowSpec> flows)
    : sim_(sim), transport_(transport), flows_(std::move(flows)), complete_(flows_.size(), false) {
  if (!flows_.empty()) first_id_ = flows_.front().id;
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

bool FlowSchedule::owns(std::uint32_t flow_id) const {
  return flow_id >= first_id_ && flow_id - first_id_ < complete_.size();
}

void FlowSchedule::on_flow_complete(const FlowSpec& flow, TimePs /*at_ps*/) {
  if (!owns(flow.id) || complete_[flow.id - first_id_]) return;
  complete_[flow.id - first_id_] = true;
  ++completed_;
}

std::optional<WorkloadProgress> FlowSchedule::progress() const {
  return WorkloadProgress{static_cast<double>(completed_), static_cast<double>(flows_.size()),
                          "flows"};
}

std::string FlowSchedule::unfinished_note() const {
  if (finished()) return {};
  return std::to_string(flows_.size() - completed_) +
         " flows did not complete by simulation.stop_ms";
}

}  // namespace safs
