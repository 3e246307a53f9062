// One decode step of AFD inference as a ComputeGraph. Per layer l and
// micro-batch j: Attn(l, j) on every attention instance A_i, a dispatch
// A_i -> F_k of its routed tokens (FP8), FFN(l, j) on every F_k once all of
// its dispatches have arrived (the 16 dispatches of 16A2F are one group: the
// last arrival binds), and a combine F_k -> A_i (BF16) that Attn(l+1, j)
// waits for. After the last layer, Sample(j) on A_i turns the combined
// results into one token per request of the micro-batch.
//
// Op order per attention instance: Attn(0,0..m-1), Attn(1,0..m-1), ...,
// Sample(0..m-1); per FFN instance: FFN(0,0..m-1), FFN(1,0..m-1), ...
#pragma once

#include <cstdint>
#include <vector>

#include "workload/compute/compute_graph.h"
#include "workload/inference/afd_spec.h"

namespace safs {

struct MicrobatchLoad {
  std::uint64_t tokens = 0;          // requests decoding in this micro-batch
  std::uint64_t context_tokens = 0;  // their KV-cache lengths, summed
};

struct DecodeStep {
  ComputeGraph graph;
  // sample_op[i][j]: the op whose end emits the tokens of instance i's
  // micro-batch j (-1 if the micro-batch is empty).
  std::vector<std::vector<int>> sample_op;
};

// `load[i][j]`: attention instance i, micro-batch j. GPU numbers in the graph
// are host indices from the spec.
DecodeStep build_decode_step(const AfdSpec& spec,
                             const std::vector<std::vector<MicrobatchLoad>>& load);

}  // namespace safs
