#include "workload/inference/decode_step.h"

#include <stdexcept>
#include <string>

namespace safs {

DecodeStep build_decode_step(const AfdSpec& spec,
                             const std::vector<std::vector<MicrobatchLoad>>& load) {
  const int a_count = spec.attention_instances();
  const int f_count = spec.ffn_instances();
  const int m = spec.microbatches;
  if (static_cast<int>(load.size()) != a_count) {
    throw std::invalid_argument("decode step: one load row per attention instance expected");
  }
  DecodeStep step;
  ComputeGraph& g = step.graph;

  // pending_combines[i][j]: the FFN ops of the previous layer whose results
  // Attn(l, j) (or Sample(j)) on A_i waits for, with their sizes.
  struct PendingCombine {
    int ffn_op;
    std::uint64_t size_bytes;
  };
  std::vector<std::vector<std::vector<PendingCombine>>> pending_combines(
      a_count, std::vector<std::vector<PendingCombine>>(m));
  auto add_consumer = [&](int host, TimePs duration_ps, std::string label, int i, int j) {
    const int op = g.add_op(host, duration_ps, std::move(label));
    for (const PendingCombine& c : pending_combines[i][j])
      g.add_transfer(c.ffn_op, op, c.size_bytes);
    pending_combines[i][j].clear();
    return op;
  };

  for (int i = 0; i < a_count; ++i) {
    if (static_cast<int>(load[i].size()) != m) {
      throw std::invalid_argument("decode step: one load per micro-batch expected");
    }
  }
  for (int l = 0; l < spec.layers; ++l) {
    const std::string layer = "l" + std::to_string(l);
    std::vector<std::vector<int>> attn(a_count, std::vector<int>(m));
    for (int i = 0; i < a_count; ++i) {
      for (int j = 0; j < m; ++j) {
        const MicrobatchLoad& mb = load[i][j];
        attn[i][j] = add_consumer(
            spec.attention_hosts[i], spec.compute.attention_ps(mb.tokens, mb.context_tokens),
            "Attn " + layer + " mb" + std::to_string(j) + " a" + std::to_string(i), i, j);
      }
    }
    for (int j = 0; j < m; ++j) {
      for (int k = 0; k < f_count; ++k) {
        std::uint64_t ffn_tokens = 0;
        for (int i = 0; i < a_count; ++i) ffn_tokens += spec.routed_tokens(load[i][j].tokens);
        const int ffn =
            g.add_op(spec.ffn_hosts[k], spec.compute.ffn_ps(ffn_tokens),
                     "FFN " + layer + " mb" + std::to_string(j) + " f" + std::to_string(k));
        for (int i = 0; i < a_count; ++i) {
          const std::uint64_t routed = spec.routed_tokens(load[i][j].tokens);
          if (routed == 0) continue;
          g.add_transfer(attn[i][j], ffn, routed * spec.hidden * spec.dispatch_bytes_per_element);
          pending_combines[i][j].push_back(
              {ffn, routed * spec.hidden * spec.combine_bytes_per_element});
        }
      }
    }
  }
  step.sample_op.assign(a_count, std::vector<int>(m, -1));
  for (int i = 0; i < a_count; ++i) {
    for (int j = 0; j < m; ++j) {
      if (load[i][j].tokens == 0) continue;
      step.sample_op[i][j] =
          add_consumer(spec.attention_hosts[i], spec.compute.sample_ps,
                       "Sample mb" + std::to_string(j) + " a" + std::to_string(i), i, j);
    }
  }
  return step;
}

}  // namespace safs
