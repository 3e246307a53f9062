// A computation as a workload: GPUs running a ComputeGraph (a training
// pipeline, a collective), whose transfers are measured flows. The run waits
// for its last op. Outputs: ops.csv and the "compute" section of summary.json.
// Its ops take the durations the run's op jitter gives them (op_jitter.h).
// A run's second and later jobs name their outputs ops_2.csv, "compute_2", ...
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "workload/compute/compute_engine.h"
#include "workload/compute/op_jitter.h"
#include "workload/workload.h"

namespace safs {

// The graph is the spec.
std::unique_ptr<Workload> make_workload(const ComputeGraph& graph, WorkloadHost& host);
std::string describe_workload(const ComputeGraph& graph);

// The hooks a computation's engine gets from the run: transfers launched as
// measured flows, timestamp updates passed on, the end reported.
ComputeHooks compute_hooks(WorkloadHost& host);
// The real durations of `graph`'s ops under the run's op jitter, on a random
// stream of their own; empty (as planned) without jitter.
RealDurations real_durations(const ComputeGraph& graph, WorkloadHost& host);

// "ops" + ".csv" for job 0, "ops_2.csv" for job 1, ...
std::string job_output_name(std::string_view base, int job, std::string_view extension = "");

class ComputeWorkload final : public Workload {
 public:
  ComputeWorkload(WorkloadHost& host, ComputeGraph graph);

  void arm() override { engine_.start(); }
  void on_flow_complete(const FlowSpec& flow, TimePs /*at_ps*/) override {
    engine_.on_flow_complete(flow.id);
  }
  bool measured() const override { return true; }
  bool finished() const override { return engine_.finished(); }
  std::optional<WorkloadProgress> progress() const override;
  std::string unfinished_note() const override;
  void report(RunReport& report) const override;

  const ComputeEngine& engine() const { return engine_; }
  // The ops' real durations, empty when they run as planned (no jitter).
  const RealDurations& real_durations() const { return real_; }

 private:
  RealDurations real_;  // before the engine, which runs them
  ComputeEngine engine_;
};

}  // namespace safs
