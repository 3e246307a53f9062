// Pipeline-parallel training as a computation: one stage per GPU host, each
// running its schedule's F, B and W ops; activations flow from stage s to
// s+1 after each F and input gradients from s to s-1 after each B, each of
// microbatch x sequence x hidden x bytes-per-element bytes. Optional
// long-lived background flows into every stage host.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/bulk_chain.h"
#include "workload/compute/compute_graph.h"
#include "workload/pipeline/schedule.h"

namespace safs {

struct PipelineWorkload {
  pipeline::PipelineSpec pipeline;  // schedule, stages, microbatches, T_F, T_B, T_W
  std::uint64_t hidden = 8192;
  std::uint64_t sequence = 4096;
  std::uint64_t microbatch_size = 1;
  std::uint64_t bytes_per_element = 2;  // bf16
  std::vector<int> stage_hosts;         // empty: hosts 0..stages-1
  int background_flows_per_stage = 0;   // k bulk senders into every stage host
  std::uint64_t background_flow_bytes = 1ull << 30;

  std::uint64_t transfer_bytes() const {
    return microbatch_size * sequence * hidden * bytes_per_element;
  }
  int stage_host(int stage) const {
    return stage_hosts.empty() ? stage : stage_hosts[static_cast<std::size_t>(stage)];
  }
  // Hosts the workload needs: the stages, then k background senders each.
  int hosts_needed() const;
};

ComputeGraph build_pipeline_graph(const PipelineWorkload& workload);
// Background sender j of stage s is host stages + s*k + j (unless stage_hosts
// are given, then the hosts after the largest stage host).
std::vector<BulkSpec> pipeline_background(const PipelineWorkload& workload);

}  // namespace safs
