// The simulator has one sampler slot; this shares it between observers with
// their own periods (the queue CSV and the trace's queue counters). The slot
// ticks at the greatest common divisor of the periods, and each observer is
// called at the multiples of its own, so each sees the same times as alone.
#pragma once

#include <functional>
#include <vector>

#include "engine/simulator.h"

namespace safs::timeline {

class SamplerFanout {
 public:
  explicit SamplerFanout(Simulator& sim) : sim_(sim) {}
  void add(TimePs period_ps, std::function<void(TimePs)> sample);

 private:
  struct Sampler {
    TimePs period_ps;
    std::function<void(TimePs)> sample;
  };
  Simulator& sim_;
  std::vector<Sampler> samplers_;
};

}  // namespace safs::timeline
