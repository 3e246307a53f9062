#include "workload/compute/op_jitter.h"

#include <cmath>

#include "engine/rng.h"

namespace safs {

RealDurations draw_real_durations(const ComputeGraph& graph, const OpJitter& jitter,
                                  std::uint64_t run_seed, std::uint64_t stream) {
  RealDurations real;
  real.duration_ps.reserve(graph.ops.size());
  const double mu = -jitter.sigma * jitter.sigma / 2;  // E[exp(mu + sigma Z)] = 1
  const double straggler_p =
      jitter.straggler_every > 0 ? 1.0 / static_cast<double>(jitter.straggler_every) : 0.0;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    const TimePs planned_ps = graph.ops[i].duration_ps;
    if (!jitter.active()) {
      real.duration_ps.push_back(planned_ps);
      continue;
    }
    Rng rng(run_seed, "compute.op_jitter", mix_keys(stream, i));
    double factor = std::exp(mu + jitter.sigma * rng.normal());
    if (rng.bernoulli(straggler_p)) {
      factor *= jitter.straggler_factor;
      ++real.stragglers;
    }
    real.duration_ps.push_back(
        static_cast<TimePs>(std::llround(static_cast<double>(planned_ps) * factor)));
  }
  return real;
}

}  // namespace safs
