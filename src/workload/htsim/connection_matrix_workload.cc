#include "workload/htsim/connection_matrix_workload.h"

namespace safs {

namespace {

FlowSpec flow_of(const CmConnection& c, TimePs start_ps, FlowClass flow_class) {
  FlowSpec flow;
  flow.src = c.src;
  flow.dst = c.dst;
  flow.size_bytes = c.size_bytes;
  flow.start_ps = start_ps;
  flow.flow_class = flow_class;
  return flow;
}

}  // namespace

std::unique_ptr<Workload> make_workload(const ConnectionMatrixSpec& spec, WorkloadHost& host) {
  return std::make_unique<ConnectionMatrixWorkload>(spec, host);
}

std::string describe_workload(const ConnectionMatrixSpec& spec) {
  return "an htsim connection matrix of " + std::to_string(spec.file.connections.size()) +
         " flows and " + std::to_string(spec.file.triggers.size()) + " triggers";
}

ConnectionMatrixWorkload::ConnectionMatrixWorkload(const ConnectionMatrixSpec& spec,
                                                   WorkloadHost& host)
    : host_(host),
      connections_(spec.file.connections),
      flow_class_(spec.flow_class),
      measured_(spec.measured) {
  for (const CmTrigger& t : spec.file.triggers) triggers_[t.id].trigger = t;
  std::vector<FlowSpec> timed;
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    const CmConnection& c = connections_[i];
    if (c.trigger != 0) {
      triggers_[c.trigger].waiting.push_back(i);
      continue;
    }
    timed.push_back(host_.register_flow(flow_of(c, c.start_ps, flow_class_), {measured_, 0}));
    connection_of_[timed.back().id] = i;
  }
  timed_ = std::make_unique<FlowSchedule>(host_.sim(), host_.transport(), std::move(timed));
}

void ConnectionMatrixWorkload::start(std::size_t connection, TimePs now) {
  const FlowSpec flow = flow_of(connections_[connection], now, flow_class_);
  connection_of_[host_.launch(flow, {measured_, 0})] = connection;
}

// As htsim's SingleShotTrigger, MultiShotTrigger and BarrierTrigger.
void ConnectionMatrixWorkload::activate(std::uint32_t trigger_id, TimePs now) {
  TriggerState& t = triggers_.at(trigger_id);
  ++t.activations;
  switch (t.trigger.kind) {
    case CmTriggerKind::kOneShot:
      if (t.fired) {
        ++late_activations_;
        return;
      }
      t.fired = true;
      for (const std::size_t c : t.waiting) start(c, now);
      return;
    case CmTriggerKind::kMultiShot:
      if (t.next < t.waiting.size()) start(t.waiting[t.next++], now);
      return;
    case CmTriggerKind::kBarrier:
      if (t.fired || t.activations < t.trigger.count) return;
      t.fired = true;
      for (const std::size_t c : t.waiting) start(c, now);
      return;
  }
}

void ConnectionMatrixWorkload::on_flow_complete(const FlowSpec& flow, TimePs at_ps) {
  const auto it = connection_of_.find(flow.id);
  if (it == connection_of_.end()) return;
  const CmConnection& c = connections_[it->second];
  connection_of_.erase(it);
  ++completed_;
  timed_->on_flow_complete(flow, at_ps);
  // The transport interface reports a flow once its last byte reaches the
  // receiving application; htsim's send_done fires when the sender learns it
  // (about one ACK later). Both fire here, send_done first.
  if (c.send_done != 0) activate(c.send_done, at_ps);
  if (c.recv_done != 0) activate(c.recv_done, at_ps);
  if (measured_ && finished()) host_.workload_finished();
}

std::optional<WorkloadProgress> ConnectionMatrixWorkload::progress() const {
  return WorkloadProgress{static_cast<double>(completed_), static_cast<double>(connections_.size()),
                          "flows"};
}

std::string ConnectionMatrixWorkload::unfinished_note() const {
  if (finished()) return {};
  return std::to_string(connections_.size() - completed_) +
         " connection-matrix flows did not complete by simulation.stop_ms (a flow waiting on a "
         "trigger that never fires never starts)";
}

void ConnectionMatrixWorkload::report(RunReport& report) const {
  std::size_t started = 0;
  for (const auto& [id, t] : triggers_)
    started +=
        t.trigger.kind == CmTriggerKind::kMultiShot ? t.next : (t.fired ? t.waiting.size() : 0);
  report.summary_sections["connection_matrix"] = {
      {"flows", connections_.size()},
      {"completed", completed_},
      {"triggers", triggers_.size()},
      {"started_by_triggers", started},
      {"oneshot_activations_after_firing", late_activations_}};
}

}  // namespace safs
