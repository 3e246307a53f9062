#include "metrics/flow_outcomes.h"

#include <algorithm>

#include "metrics/flow_recorder.h"

namespace safs {

void FlowTotals::add(const FlowRecord& r) {
  ++flows;
  first_start_ps = std::min(first_start_ps, r.spec.start_ps);
  delivered_bytes += r.delivered_bytes;
  data_packets += r.data_packets;
  control_packets += r.control_packets;
  if (!r.complete()) return;
  completed_bytes += r.spec.size_bytes;
  last_finish_ps = std::max(last_finish_ps, r.finish_ps);
}

FlowTotals& FlowTotals::operator+=(const FlowTotals& o) {
  flows += o.flows;
  first_start_ps = std::min(first_start_ps, o.first_start_ps);
  last_finish_ps = std::max(last_finish_ps, o.last_finish_ps);
  delivered_bytes += o.delivered_bytes;
  completed_bytes += o.completed_bytes;
  data_packets += o.data_packets;
  control_packets += o.control_packets;
  return *this;
}

void FlowOutcomes::set(const FlowRecord& r) {
  const std::uint32_t id = r.spec.id;
  if (flags_.size() <= id) {
    flags_.resize(id + 1, 0);
    fct_s_.resize(id + 1, 0);
    slowdown_.resize(id + 1, 0);
    lateness_or_deadline_ps_.resize(id + 1, 0);
  }
  std::uint8_t flags = kKnown;
  if (r.spec.flow_class == FlowClass::kUrgent) flags |= kUrgent;
  if (r.complete()) {
    flags |= kComplete;
    fct_s_[id] = ps_to_sec(r.fct_ps());
    slowdown_[id] = r.slowdown();
  }
  if (r.spec.has_deadline()) {
    flags |= kHasDeadline;
    if (r.met_deadline()) flags |= kMetDeadline;
    lateness_or_deadline_ps_[id] =
        r.complete() ? r.finish_ps - r.spec.deadline_ps : r.spec.deadline_ps;
  }
  flags_[id] = flags;
}

}  // namespace safs
