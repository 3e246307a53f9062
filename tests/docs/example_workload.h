// The worked example of docs/adding-a-workload.md: ring all-reduce of one
// gradient as a ComputeGraph. The doc quotes the regions between "snippet:"
// markers verbatim; docs_snippet_test checks that they match.
#pragma once

#include <cstdint>
#include <vector>

#include "experiment/workload_kind.h"
#include "workload/compute/compute_graph.h"

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

// The [allreduce] section: add it to workload_kinds() in
// src/experiment/workload_kind.cc to make it a scenario section.
WorkloadKind ring_allreduce_kind();

}  // namespace safs::example
