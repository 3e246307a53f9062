#include "workload/inference/inference_driver.h"

#include <algorithm>

#include "engine/rng.h"
#include "workload/compute/compute_workload.h"
#include "workload/inference/inference_report.h"

namespace safs {

std::unique_ptr<Workload> make_workload(const InferenceWorkload& spec, WorkloadHost& host) {
  ComputeHooks hooks = compute_hooks(host);
  if (spec.free_communication) hooks.launch = nullptr;
  const OpJitter& jitter = host.op_jitter();
  // No random stream taken without jitter: the other workloads' draws stay put.
  const std::uint64_t jitter_stream = jitter.active() ? host.next_random_stream() : 0;
  return std::make_unique<InferenceDriver>(host.sim(), spec, host.shape().seed, std::move(hooks),
                                           jitter, jitter_stream);
}

std::string describe_workload(const InferenceWorkload& spec) {
  return "AFD inference on " + std::to_string(spec.afd.attention_instances()) + " attention and " +
         std::to_string(spec.afd.ffn_instances()) + " FFN instances";
}

namespace {

InferenceWorkload with_arrival_rate(InferenceWorkload w, TimePs full_batch_step_ps) {
  if (w.batch_load > 0) w.requests.arrivals_per_s = arrivals_per_s_for_load(w, full_batch_step_ps);
  return w;
}

}  // namespace

InferenceDriver::InferenceDriver(Simulator& sim, InferenceWorkload workload, std::uint64_t seed,
                                 ComputeHooks hooks, OpJitter jitter, std::uint64_t jitter_stream)
    : sim_(sim),
      full_batch_step_ps_(safs::full_batch_step_ps(workload)),
      workload_(with_arrival_rate(std::move(workload), full_batch_step_ps_)),
      hooks_(std::move(hooks)),
      stream_(workload_.requests, seed),
      batcher_(workload_.afd.attention_instances(), workload_.afd.microbatches,
               workload_.afd.max_tokens_per_microbatch),
      step_timer_(sim, [this] { begin_step(); }),
      measured_left_(workload_.measured_requests),
      seed_(seed),
      jitter_(jitter),
      jitter_stream_(jitter_stream) {
  next_arrival_ = stream_.next();
}

bool InferenceDriver::measured(const Request& r) const {
  return r.index >= workload_.warmup_requests &&
         r.index < workload_.warmup_requests + workload_.measured_requests;
}

void InferenceDriver::arm() { step_timer_.arm_at(std::max(sim_.now(), next_arrival_.arrival_ps)); }

void InferenceDriver::on_flow_complete(const FlowSpec& flow, TimePs /*at_ps*/) {
  if (engine_) engine_->on_flow_complete(flow.id);
}

std::optional<WorkloadProgress> InferenceDriver::progress() const {
  double done = 0;
  for (const Request& r : requests_) done += measured(r) && r.finished() ? 1 : 0;
  return WorkloadProgress{done, static_cast<double>(workload_.measured_requests),
                          "measured requests"};
}

std::string InferenceDriver::unfinished_note() const {
  if (finished()) return {};
  return std::to_string(summarize_tpot(*this).requests) + " of " +
         std::to_string(workload_.measured_requests) +
         " measured requests finished by simulation.stop_ms; TPOT covers only those";
}

void InferenceDriver::report(RunReport& report) const {
  report.files.emplace_back("requests.csv", requests_csv(*this));
  report.files.emplace_back("steps.csv", steps_csv(*this));
  report.summary_sections["inference"] = inference_json(*this);
}

void InferenceDriver::take_arrivals(TimePs now) {
  while (next_arrival_.arrival_ps <= now) {
    requests_.push_back(next_arrival_);
    waiting_.push_back(&requests_.back());
    next_arrival_ = stream_.next();
  }
}

// The step that just ended: its tokens, its timing, its late transfers.
void InferenceDriver::record_step() {
  const ComputeEngine& e = *engine_;
  StepRecord& s = steps_.back();
  s.end_ps = e.started_ps() + e.makespan_ps();
  s.compute_only_ps = e.planned_makespan_ps();
  for (int i = 0; i < static_cast<int>(sample_op_.size()); ++i) {
    for (int j = 0; j < static_cast<int>(sample_op_[i].size()); ++j) {
      if (sample_op_[i][j] >= 0) batcher_.emit_tokens(i, j, e.ops()[sample_op_[i][j]].end_ps);
    }
  }
  for (const TransferRecord& t : e.transfers()) {
    ++s.transfers;
    const TimePs late = t.arrived_ps - t.deadline_ps;
    if (late > 0) {
      ++s.late_transfers;
      s.max_lateness_ps = std::max(s.max_lateness_ps, late);
    }
  }
  auto wait_on = [&](const std::vector<int>& hosts) {
    TimePs wait = 0;
    for (const int host : hosts) {
      for (const int op : e.graph().gpu_order[host]) wait += e.ops()[op].wait_ps;
    }
    return wait;
  };
  s.attention_wait_ps = wait_on(workload_.afd.attention_hosts);
  s.ffn_wait_ps = wait_on(workload_.afd.ffn_hosts);
  for (const Request* r : batcher_.retire_finished()) {
    if (measured(*r)) --measured_left_;
  }
}

void InferenceDriver::begin_step() {
  if (engine_) {
    record_step();
    if (step_observer_) step_observer_(*engine_);
  }
  if (finished()) {
    engine_.reset();
    if (hooks_.on_finished) hooks_.on_finished();
    return;
  }
  const TimePs now = sim_.now();
  take_arrivals(now);
  batcher_.admit(waiting_, now);
  if (batcher_.active() == 0) {  // idle until the next request arrives
    engine_.reset();
    step_timer_.arm_at(next_arrival_.arrival_ps);
    return;
  }
  DecodeStep step = build_decode_step(workload_.afd, batcher_.load());
  sample_op_ = std::move(step.sample_op);
  StepRecord record;
  record.start_ps = now;
  record.tokens = static_cast<std::uint32_t>(batcher_.active());
  steps_.push_back(record);

  ComputeHooks hooks = hooks_;
  // The engine reports its end from inside its own event; the next step
  // starts in a fresh event at the same time, after the engine has returned.
  hooks.on_finished = [this] { step_timer_.arm_at(sim_.now()); };
  RealDurations real;  // empty: as planned
  if (jitter_.active()) {
    real = draw_real_durations(step.graph, jitter_, seed_, mix_keys(jitter_stream_, steps_.size()));
    stragglers_ += real.stragglers;
  }
  engine_ = std::make_unique<ComputeEngine>(sim_, std::move(step.graph), std::move(hooks),
                                            std::move(real.duration_ps));
  engine_->start();
}

}  // namespace safs
