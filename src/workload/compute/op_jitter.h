// Compute ops as they really run, against the plan. Each op's duration is
// its planned one times a lognormal factor exp(mu + sigma Z), Z standard
// normal and mu = -sigma^2/2 so that the factor's mean is 1 (the plan is
// right on average; the median op is a little shorter). On top, each op is a
// straggler with probability 1/straggler_every and then takes
// straggler_factor times longer (a throttled GPU, a slow kernel launch, a
// page fault). The engine keeps these real durations from the timestamps:
// the runtime plans with the planned durations and learns the real ones only
// as ops end (compute_engine.h).
#pragma once

#include <cstdint>
#include <vector>

#include "base/time.h"
#include "workload/compute/compute_graph.h"

namespace safs {

// The [jitter] section. The default (sigma 0, no stragglers): ops take
// exactly their planned durations.
struct OpJitter {
  double sigma = 0;                   // of the lognormal factor's logarithm
  std::uint32_t straggler_every = 0;  // one op in this many, at random; 0 = none
  double straggler_factor = 3;        // a straggler's duration over its jittered one

  bool active() const { return sigma > 0 || straggler_every > 0; }
};

struct RealDurations {
  std::vector<TimePs> duration_ps;  // per op of the graph
  std::uint32_t stragglers = 0;
};

// The real durations of the graph's ops (the planned ones if `jitter` is
// inactive). `stream` names the computation (its workload's random stream,
// mixed with a step number for inference); each op draws from a key of its
// own, (stream, op index), so its duration does not depend on the order in
// which ops run, nor on the transport.
RealDurations draw_real_durations(const ComputeGraph& graph, const OpJitter& jitter,
                                  std::uint64_t run_seed, std::uint64_t stream);

}  // namespace safs
