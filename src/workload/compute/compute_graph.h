// A distributed computation as the network sees it: GPUs (hosts) each run
// their ops in a planned order; ops on different GPUs are linked by
// transfers. An op starts when the previous op on its GPU is done and all of
// its input transfers have arrived; a transfer starts when its producer op
// ends. Pipeline training and attention-FFN inference both build one.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/time.h"

namespace safs {

struct ComputeOp {
  int gpu = 0;  // host index
  TimePs duration_ps = 0;
  std::string label;        // for traces and tests ("F s1 mb3")
  std::vector<int> inputs;  // transfer indices that must arrive first
};

struct Transfer {
  int producer = -1;  // op whose end starts it (-1: starts with the computation, from src)
  int consumer = 0;   // op that needs it
  int src = 0;
  int dst = 0;
  std::uint64_t size_bytes = 0;
};

struct ComputeGraph {
  // Which of the run's computations this is (0: the first). It names the
  // job's outputs and keeps its transfers' dependency ids apart from other
  // jobs'.
  int job = 0;
  std::vector<ComputeOp> ops;
  std::vector<std::vector<int>> gpu_order;  // per GPU: op indices in execution order
  std::vector<Transfer> transfers;

  int add_op(int gpu, TimePs duration_ps, std::string label);  // appends to the GPU's order
  // `src`: the sending GPU of a transfer without a producer (producer -1).
  int add_transfer(int producer, int consumer, std::uint64_t size_bytes, int src = -1);
  // Throws std::invalid_argument if an index is out of range, a transfer
  // stays on one GPU or has neither a producer nor a source, or an op is
  // missing from its GPU's order.
  void validate() const;
};

// Start times if every transfer took `transfer_ps` (0: free communication):
// the plan the no-bubble timestamps come from. Throws std::logic_error if the
// orders deadlock.
std::vector<TimePs> planned_starts(const ComputeGraph& graph, TimePs transfer_ps = 0);
// When the last op ends if each starts at `starts` (0 for no ops).
TimePs makespan_ps(const ComputeGraph& graph, const std::vector<TimePs>& starts);

}  // namespace safs
