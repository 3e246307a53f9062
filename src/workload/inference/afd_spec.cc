#include "workload/inference/afd_spec.h"

#include <cmath>

namespace safs {

TimePs AfdComputeModel::attention_ps(std::uint64_t tokens, std::uint64_t context_tokens) const {
  if (tokens == 0) return 0;  // an empty micro-batch costs nothing
  return attention_fixed_ps + attention_per_token_ps * static_cast<TimePs>(tokens) +
         attention_per_context_token_ps * static_cast<TimePs>(context_tokens);
}

TimePs AfdComputeModel::ffn_ps(std::uint64_t tokens) const {
  if (tokens == 0) return 0;
  return ffn_fixed_ps + ffn_per_token_ps * static_cast<TimePs>(tokens);
}

std::uint64_t AfdSpec::routed_tokens(std::uint64_t tokens) const {
  // Rounded up: a micro-batch with tokens sends at least one to each FFN
  // instance it routes to, as top-k routing over many tokens would.
  // (Less a hair, so that 0.55 x 100 is 55, not 56 from rounding noise.)
  return static_cast<std::uint64_t>(
      std::ceil(routing_fraction * static_cast<double>(tokens) - 1e-9));
}

}  // namespace safs
