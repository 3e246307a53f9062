// Attention-FFN disaggregated (AFD) decode, as in MegaScale-Infer and Step-3:
// attention instances (data parallel, each holding its requests' KV cache)
// and FFN instances (expert parallel). Each decode step runs every layer once;
// the batch of each attention instance is split into micro-batches that
// ping-pong A -> F -> A once per layer, so one micro-batch's communication
// hides behind the others' compute.
//
// Compute-time model (a model, not a measurement; docs/workloads.md gives
// the reasoning): an attention op costs a fixed part, a part per token and a
// part per context token read from the KV cache; an FFN op a fixed part and a
// part per token it receives. The defaults put one op near the communication
// of one micro-batch at 100 Gbit/s, the regime AFD is designed for, and a
// full-batch compute-only step of about 40 ms, under Step-3's 50 ms TPOT target.
#pragma once

#include <cstdint>
#include <vector>

#include "base/time.h"

namespace safs {

struct AfdComputeModel {
  TimePs attention_fixed_ps = 20 * kPsPerUs;
  TimePs attention_per_token_ps = 20 * kPsPerUs;
  TimePs attention_per_context_token_ps = 1 * kPsPerNs;  // KV-cache read
  TimePs ffn_fixed_ps = 20 * kPsPerUs;
  TimePs ffn_per_token_ps = 1'560 * kPsPerNs;
  TimePs sample_ps = 20 * kPsPerUs;  // LM head and sampling after the last layer

  TimePs attention_ps(std::uint64_t tokens, std::uint64_t context_tokens) const;
  TimePs ffn_ps(std::uint64_t tokens) const;
};

struct AfdSpec {
  std::vector<int> attention_hosts;              // one attention instance per host
  std::vector<int> ffn_hosts;                    // one FFN instance per host
  int layers = 61;                               // DeepSeek-V3 / Step-3
  int microbatches = 3;                          // Step-3's num_afd_stages
  std::uint64_t hidden = 7168;                   // DeepSeek-V3 / Step-3 hidden size
  std::uint64_t dispatch_bytes_per_element = 1;  // FP8 activations A -> F
  std::uint64_t combine_bytes_per_element = 2;   // BF16 results F -> A
  double routing_fraction = 1.0;      // share of an instance's tokens sent to each FFN instance
  int max_tokens_per_microbatch = 8;  // batch per attention instance = this x microbatches
  AfdComputeModel compute;

  int attention_instances() const { return static_cast<int>(attention_hosts.size()); }
  int ffn_instances() const { return static_cast<int>(ffn_hosts.size()); }
  // Tokens of one attention micro-batch that reach one FFN instance.
  std::uint64_t routed_tokens(std::uint64_t tokens) const;
};

}  // namespace safs
