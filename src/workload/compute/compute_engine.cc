#include "workload/compute/compute_engine.h"

#include <algorithm>
#include <stdexcept>

#include "workload/compute/bubble_account.h"

namespace safs {

ComputeEngine::ComputeEngine(Simulator& sim, ComputeGraph graph, ComputeHooks hooks,
                             std::vector<TimePs> real_duration_ps, TimePs update_threshold_ps)
    : sim_(sim),
      graph_(std::move(graph)),
      hooks_(std::move(hooks)),
      real_duration_ps_(std::move(real_duration_ps)),
      update_threshold_ps_(update_threshold_ps) {
  graph_.validate();
  if (real_duration_ps_.empty()) {
    for (const ComputeOp& op : graph_.ops) real_duration_ps_.push_back(op.duration_ps);
  }
  if (real_duration_ps_.size() != graph_.ops.size()) {
    throw std::invalid_argument("compute engine: one real duration per op expected");
  }
  const std::vector<TimePs> plan = planned_starts(graph_);
  planned_makespan_ps_ = safs::makespan_ps(graph_, plan);
  ops_.resize(graph_.ops.size());
  inputs_missing_.resize(graph_.ops.size());
  for (std::size_t i = 0; i < graph_.ops.size(); ++i) {
    ops_[i].planned_start_ps = plan[i];
    inputs_missing_[i] = static_cast<int>(graph_.ops[i].inputs.size());
  }
  projected_start_ps_ = plan;
  produces_.resize(graph_.ops.size());
  for (std::size_t t = 0; t < graph_.transfers.size(); ++t) {
    const int producer = graph_.transfers[t].producer;
    (producer >= 0 ? produces_[producer] : initial_).push_back(static_cast<int>(t));
  }
  transfers_.resize(graph_.transfers.size());
  gpus_.resize(graph_.gpu_order.size());
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    if (graph_.gpu_order[g].empty()) continue;  // a host this computation does not use
    gpus_[g].op_end = std::make_unique<Timer>(sim_, [this, g] { on_op_end(static_cast<int>(g)); });
  }
}

void ComputeEngine::start() {
  started_ps_ = sim_.now();
  for (std::size_t i = 0; i < ops_.size(); ++i) {
    ops_[i].planned_start_ps += started_ps_;
    projected_start_ps_[i] += started_ps_;
  }
  for (const int t : initial_) launch(t, -1);  // before any GPU looks at its inputs
  for (std::size_t g = 0; g < gpus_.size(); ++g) {
    gpus_[g].free_since_ps = started_ps_;
    try_start(static_cast<int>(g));
    watch_waiting(static_cast<int>(g));
  }
  if (finished() && hooks_.on_finished) hooks_.on_finished();
}

void ComputeEngine::try_start(int gpu) {
  Gpu& g = gpus_[gpu];
  const std::vector<int>& order = graph_.gpu_order[gpu];
  if (g.busy || g.next >= order.size()) return;
  const int op = order[g.next];
  if (inputs_missing_[op] > 0) return;
  const TimePs now = sim_.now();
  OpRecord& record = ops_[op];
  record.start_ps = now;
  record.wait_ps = now - g.free_since_ps;
  g.busy = true;
  ++g.next;
  g.op_end->arm_at(now + real_duration_ps_[op]);
  refresh_deadlines(gpu);
  if (hooks_.announce && hooks_.launch) {
    // A runtime knows the op's planned duration, not its real one.
    for (const int t : produces_[op]) {
      hooks_.announce(transfer_flow(t, now + graph_.ops[op].duration_ps));
    }
  }
}

void ComputeEngine::on_op_end(int gpu) {
  Gpu& g = gpus_[gpu];
  const int op = graph_.gpu_order[gpu][g.next - 1];
  const TimePs now = sim_.now();
  ops_[op].end_ps = now;
  g.busy = false;
  g.free_since_ps = now;
  ++ops_done_;
  for (const int t : produces_[op]) launch(t, gpu);
  try_start(gpu);
  refresh_deadlines(gpu);
  watch_waiting(gpu);
  if (finished() && hooks_.on_finished) hooks_.on_finished();
}

// Starts transfer `t` from `gpu` (-1: one without a producer, at the start).
void ComputeEngine::launch(int t, int gpu) {
  const Transfer& transfer = graph_.transfers[t];
  const TimePs now = sim_.now();
  if (!hooks_.launch) {  // free communication: it arrives as it leaves
    TransferRecord& record = transfers_[t];
    record.launched_ps = record.arrived_ps = now;
    record.first_deadline_ps = record.deadline_ps = no_bubble_ps(transfer.consumer);
    --inputs_missing_[transfer.consumer];
    const int consumer_gpu = graph_.ops[transfer.consumer].gpu;
    if (gpu >= 0 && consumer_gpu != gpu) try_start(consumer_gpu);
    return;
  }
  const FlowSpec flow = transfer_flow(t, now);
  TransferRecord& record = transfers_[t];
  record.launched_ps = now;
  record.first_deadline_ps = record.deadline_ps = flow.deadline_ps;
  record.flow_id = hooks_.launch(flow);
  if (!any_flow_) {
    first_flow_id_ = record.flow_id;
    any_flow_ = true;
  }
  const std::size_t slot = record.flow_id - first_flow_id_;
  if (transfer_of_flow_.size() <= slot) transfer_of_flow_.resize(slot + 1, -1);
  transfer_of_flow_[slot] = static_cast<int>(t);
  watch_waiting(graph_.ops[transfer.consumer].gpu);
}

FlowSpec ComputeEngine::transfer_flow(int t, TimePs start_ps) const {
  const Transfer& transfer = graph_.transfers[t];
  FlowSpec flow;
  flow.src = transfer.src;
  flow.dst = transfer.dst;
  flow.size_bytes = transfer.size_bytes;
  flow.start_ps = start_ps;
  flow.flow_class = FlowClass::kUrgent;
  // Unique across jobs: job j's consumer ops count from j * 2^32 (a graph has
  // fewer ops than that).
  flow.dependency = (static_cast<std::uint64_t>(graph_.job) << 32) +
                    static_cast<std::uint64_t>(transfer.consumer) + 1;
  flow.deadline_ps = no_bubble_ps(transfer.consumer);
  return flow;
}

void ComputeEngine::on_flow_complete(std::uint32_t flow_id) {
  if (!any_flow_ || flow_id < first_flow_id_ ||
      flow_id - first_flow_id_ >= transfer_of_flow_.size()) {
    return;
  }
  const int t = transfer_of_flow_[flow_id - first_flow_id_];
  if (t < 0) return;
  transfers_[t].arrived_ps = sim_.now();
  const int consumer = graph_.transfers[t].consumer;
  --inputs_missing_[consumer];
  try_start(graph_.ops[consumer].gpu);
}

// A GPU that idles before the no-bubble timestamp of the op it waits on loses
// nothing yet (the plan has it idle too); from that timestamp on, every input
// still on its way makes a bubble, and its consumer waits for it. Called when
// the GPU goes idle and when an input is launched (launched late, its watch
// falls due at once); the host decides at that time whether it arrived.
void ComputeEngine::watch_waiting(int gpu) {
  Gpu& g = gpus_[gpu];
  const std::vector<int>& order = graph_.gpu_order[gpu];
  if (!hooks_.consumer_waiting || g.busy || g.next >= order.size()) return;
  const int op = order[g.next];
  for (const int t : graph_.ops[op].inputs) {
    TransferRecord& record = transfers_[t];
    if (record.launched_ps < 0 || record.arrived_ps >= 0 || record.consumer_waited) continue;
    record.consumer_waited = true;
    hooks_.consumer_waiting(record.flow_id, projected_start_ps_[op]);
  }
}

TimePs ComputeEngine::no_bubble_ps(int op) const { return projected_start_ps_[op]; }

// Where would each pending op of this GPU start if its inputs arrived in
// time? Queue the remaining ops behind the current one, none before its plan,
// each taking its planned duration: the real ones are not known in advance.
//
// The plan runs each GPU's ops back to back or later, so once an op can
// start at its plan, every later one can too. Past `projected_moved_end`
// (every op there already projected at its plan, its inputs told so) the
// walk can stop there: it would change nothing, and walking the whole queue
// on every op made a step's cost quadratic in its ops.
void ComputeEngine::refresh_deadlines(int gpu) {
  Gpu& g = gpus_[gpu];
  const std::vector<int>& order = graph_.gpu_order[gpu];
  TimePs cursor = sim_.now();
  if (g.busy) {  // expected to end as planned (it is known to run until now at least)
    const int running = order[g.next - 1];
    cursor = std::max(cursor, ops_[running].start_ps + graph_.ops[running].duration_ps);
  }
  std::size_t moved_end = 0;
  for (std::size_t k = g.next; k < order.size(); ++k) {
    const int op = order[k];
    if (k >= g.projected_moved_end && cursor <= ops_[op].planned_start_ps) break;
    const TimePs start = std::max(ops_[op].planned_start_ps, cursor);
    if (start != ops_[op].planned_start_ps) moved_end = k + 1;
    projected_start_ps_[op] = start;
    cursor = start + graph_.ops[op].duration_ps;
    for (const int t : graph_.ops[op].inputs) {
      TransferRecord& record = transfers_[t];
      if (record.launched_ps < 0 || record.arrived_ps >= 0) continue;
      const TimePs moved = start - record.deadline_ps;
      if (moved > update_threshold_ps_ || moved < -update_threshold_ps_) {
        record.deadline_ps = start;
        ++record.deadline_updates;
        hooks_.update_deadline(record.flow_id, start);
      }
    }
  }
  g.projected_moved_end = moved_end;
}

TimePs ComputeEngine::makespan_ps() const {
  TimePs last = started_ps_;
  for (const OpRecord& r : ops_) last = std::max(last, r.end_ps);
  return last - started_ps_;
}

TimePs ComputeEngine::busy_ps(int gpu) const {
  TimePs busy = 0;
  for (const int op : graph_.gpu_order[gpu]) {
    if (ops_[op].end_ps >= 0) busy += ops_[op].end_ps - ops_[op].start_ps;
  }
  return busy;
}

TimePs ComputeEngine::bubble_ps(int gpu) const { return BubbleAccount(*this).gpu(gpu).total_ps(); }

}  // namespace safs
