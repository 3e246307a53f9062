// The worked examples of docs/adding-a-workload.md: ring all-reduce of one
// gradient as a ComputeGraph, and periodic checkpoint writes as a workload
// of its own. The doc quotes the regions between "snippet:" markers
// verbatim; docs_snippet_test checks that they match.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/simulator.h"
#include "experiment/workload_kind.h"
#include "workload/compute/compute_graph.h"
#include "workload/workload.h"

namespace safs::example {

// [snippet:spec]
// Data-parallel training's gradient exchange: every GPU ends its backward
// pass with the whole gradient, then a ring all-reduce (reduce-scatter and
// all-gather, 2(n-1) steps) leaves every GPU with the sum. In each step every
// GPU sends one chunk (gradient / n) to the next GPU in the ring and reduces
// (or copies) the chunk it receives.
struct RingAllReduce {
  std::vector<int> gpus;  // hosts, in ring order
  TimePs backward_ps = kPsPerMs;
  TimePs step_ps = 10 * kPsPerUs;  // reduce or copy one received chunk
  std::uint64_t gradient_bytes = 64ull << 20;

  std::uint64_t chunk_bytes() const { return gradient_bytes / gpus.size(); }
  int steps() const { return 2 * (static_cast<int>(gpus.size()) - 1); }
};
// [end-snippet]

ComputeGraph build_ring_allreduce_graph(const RingAllReduce& spec);

// [snippet:plugin]
// The spec becomes a workload through two functions found by argument-
// dependent lookup: a computation is a ComputeWorkload over its graph.
std::unique_ptr<Workload> make_workload(const RingAllReduce& spec, WorkloadHost& host);
std::string describe_workload(const RingAllReduce& spec);
// [end-snippet]

// [snippet:checkpoint-spec]
// Every period, one host writes a checkpoint to a storage host: background
// traffic the run waits for (measured) until `count` writes have landed.
struct Checkpoints {
  int src = 0;
  int dst = 1;
  std::uint64_t size_bytes = 256ull << 20;
  TimePs period_ps = 10 * kPsPerMs;
  std::uint32_t count = 3;
};

std::unique_ptr<Workload> make_workload(const Checkpoints& spec, WorkloadHost& host);
std::string describe_workload(const Checkpoints& spec);

class CheckpointWriter final : public Workload, public EventHandler {
 public:
  CheckpointWriter(WorkloadHost& host, Checkpoints spec) : host_(host), spec_(spec) {}

  void arm() override;
  void handle_event(EventId id) override;  // a period has passed: write one
  void on_flow_complete(const FlowSpec& flow, TimePs at_ps) override;
  bool measured() const override { return true; }
  bool finished() const override { return landed_ == spec_.count; }
  std::optional<WorkloadProgress> progress() const override {
    return WorkloadProgress{static_cast<double>(landed_), static_cast<double>(spec_.count),
                            "checkpoints"};
  }
  void report(RunReport& report) const override;

 private:
  WorkloadHost& host_;
  Checkpoints spec_;
  std::vector<std::uint32_t> flow_ids_;  // one per write, in order
  std::uint32_t landed_ = 0;
  TimePs slowest_ps_ = 0;
};
// [end-snippet]

// The [allreduce] section: add it to workload_kinds() in
// src/experiment/workload_kind.cc to make it a scenario section.
WorkloadKind ring_allreduce_kind();

}  // namespace safs::example
