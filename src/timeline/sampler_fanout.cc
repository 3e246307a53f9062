#include "timeline/sampler_fanout.h"

#include <numeric>

namespace safs::timeline {

void SamplerFanout::add(TimePs period_ps, std::function<void(TimePs)> sample) {
  samplers_.push_back({period_ps > 0 ? period_ps : 1, std::move(sample)});
  TimePs tick_ps = 0;
  for (const Sampler& s : samplers_) tick_ps = std::gcd(tick_ps, s.period_ps);
  sim_.set_sampler(tick_ps, [this](TimePs at) {
    for (const Sampler& s : samplers_) {
      if (at % s.period_ps == 0) s.sample(at);
    }
  });
}

}  // namespace safs::timeline
