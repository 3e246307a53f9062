// Runs AFD decode serving on the simulator, one decode step at a time: at
// each step boundary finished requests leave, arrived ones join (continuous
// batching), and the step's ComputeGraph is built from the batch and run by a
// ComputeEngine, whose transfers carry their consumers' no-bubble timestamps
// like any other computation's. A step ends when its last op does; the next
// one starts at once (or at the next arrival if no request is left). Each
// step's ops take the durations the run's op jitter gives them (op_jitter.h).
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "engine/timer.h"
#include "workload/compute/compute_engine.h"
#include "workload/compute/op_jitter.h"
#include "workload/inference/continuous_batcher.h"
#include "workload/inference/inference_workload.h"
#include "workload/workload.h"

namespace safs {

struct StepRecord {
  TimePs start_ps = 0;
  TimePs end_ps = 0;
  TimePs compute_only_ps = 0;  // the same step with free communication
  std::uint32_t tokens = 0;    // requests in the batch
  std::uint32_t transfers = 0;
  std::uint32_t late_transfers = 0;  // arrived after their no-bubble timestamp
  TimePs max_lateness_ps = 0;
  TimePs attention_wait_ps = 0;  // summed over attention instances: bubbles
  TimePs ffn_wait_ps = 0;        // summed over FFN instances
};

// The workload spec is InferenceWorkload; free_communication runs it with an
// infinitely fast network (the compute-only reference).
std::unique_ptr<Workload> make_workload(const InferenceWorkload& spec, WorkloadHost& host);
std::string describe_workload(const InferenceWorkload& spec);

class InferenceDriver final : public Workload {
 public:
  // `hooks.on_finished` fires once every measured request has finished. An
  // empty `hooks.launch` means free communication. `jitter_stream` keys the
  // op jitter's draws (with the step number).
  InferenceDriver(Simulator& sim, InferenceWorkload workload, std::uint64_t seed,
                  ComputeHooks hooks, OpJitter jitter = {}, std::uint64_t jitter_stream = 0);
  InferenceDriver(const InferenceDriver&) = delete;
  InferenceDriver& operator=(const InferenceDriver&) = delete;

  void arm() override;  // the first step begins at the first arrival
  void on_flow_complete(const FlowSpec& flow, TimePs at_ps) override;
  bool measured() const override { return true; }
  bool finished() const override { return measured_left_ == 0; }
  std::optional<WorkloadProgress> progress() const override;
  std::string unfinished_note() const override;
  // requests.csv, steps.csv and the "inference" section of summary.json.
  void report(RunReport& report) const override;
  // Called with each step's engine once the step has ended, before the engine
  // is discarded (for traces: the ops of every step). Observing changes nothing.
  void set_step_observer(std::function<void(const ComputeEngine&)> observer) {
    step_observer_ = std::move(observer);
  }
  // The step still running when the run stopped, if any (its ops may be unfinished).
  const ComputeEngine* running_step() const { return engine_.get(); }

  const InferenceWorkload& workload() const { return workload_; }
  double arrivals_per_s() const { return workload_.requests.arrivals_per_s; }
  // The compute-only step with every slot full (what batch_load refers to).
  TimePs full_batch_step_ps() const { return full_batch_step_ps_; }
  const std::deque<Request>& requests() const { return requests_; }  // arrived so far
  const std::vector<StepRecord>& steps() const { return steps_; }
  bool measured(const Request& r) const;
  const OpJitter& op_jitter() const { return jitter_; }
  std::uint64_t stragglers() const { return stragglers_; }  // ops so far, every step

 private:
  void begin_step();
  void record_step();
  void take_arrivals(TimePs now);

  Simulator& sim_;
  TimePs full_batch_step_ps_;  // before workload_: its arrival rate derives from it
  InferenceWorkload workload_;
  ComputeHooks hooks_;
  RequestStream stream_;
  Request next_arrival_;
  std::deque<Request> requests_;
  std::deque<Request*> waiting_;
  ContinuousBatcher batcher_;
  std::unique_ptr<ComputeEngine> engine_;  // the step running (or just ended)
  std::vector<std::vector<int>> sample_op_;
  std::vector<StepRecord> steps_;
  Timer step_timer_;
  std::uint32_t measured_left_;
  std::function<void(const ComputeEngine&)> step_observer_;
  std::uint64_t seed_;
  OpJitter jitter_;
  std::uint64_t jitter_stream_;
  std::uint64_t stragglers_ = 0;
};

}  // namespace safs
