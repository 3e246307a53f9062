#include "cli/run_progress.h"

#include <chrono>
#include <cstdio>
#include <string>

namespace safs::cli {

namespace {

// Often enough for a smooth bar at millions of events per second; rarely
// enough that the check (a scan of ops, requests or flows) costs nothing
// measurable.
constexpr std::uint64_t kEventsPerProgressCheck = 1 << 16;

struct Measure {
  double done = 0;
  double expected = 0;  // 0: nothing countable ends the run
  std::string unit;
};

// The measured workload that ends the run last is not known in advance; the
// last one listed with a countable measure stands for the run (a computation
// or an inference server after the flows it carries). None if a measured
// workload has no countable measure (a Poisson generator ends by time).
Measure countable_progress(const Experiment& experiment) {
  Measure m;
  for (const auto& workload : experiment.workloads()) {
    if (!workload->measured()) continue;
    const std::optional<WorkloadProgress> p = workload->progress();
    if (!p) return {};
    m = {p->done, p->expected, p->unit};
  }
  return m;
}

}  // namespace

void install_progress(Experiment& experiment, console::ProgressLine& line) {
  const auto start = std::chrono::steady_clock::now();
  const double stop_s = ps_to_sec(experiment.config().stop_ps);
  experiment.sim().set_progress_hook(kEventsPerProgressCheck, [&experiment, &line, start, stop_s] {
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double sim_s = ps_to_sec(experiment.sim().now());
    const double rate =
        wall > 0 ? static_cast<double>(experiment.sim().events_processed()) / wall : 0.0;
    const Measure m = countable_progress(experiment);
    char text[200];
    if (m.expected > 0) {
      const double eta = m.done > 0 ? wall * (m.expected - m.done) / m.done : 0;
      std::snprintf(text, sizeof text,
                    "%.0f of %.0f %s, %.3f ms simulated, %.2f M events/s, ETA %s", m.done,
                    m.expected, m.unit.c_str(), sim_s * 1e3, rate / 1e6,
                    m.done > 0 ? console::duration_text(eta).c_str() : "?");
      line.show(m.done / m.expected, text);
      return;
    }
    const double eta = sim_s > 0 ? wall * (stop_s - sim_s) / sim_s : 0;
    std::snprintf(text, sizeof text, "%.3f of %.3f ms simulated, %.2f M events/s, ETA <= %s",
                  sim_s * 1e3, stop_s * 1e3, rate / 1e6, console::duration_text(eta).c_str());
    line.show(stop_s > 0 ? sim_s / stop_s : 0, text);
  });
}

}  // namespace safs::cli
