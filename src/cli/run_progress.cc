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
  const char* unit = "";
};

Measure countable_progress(Experiment& experiment) {
  if (const ComputeEngine* compute = experiment.compute()) {
    double done = 0;
    for (const OpRecord& op : compute->ops()) done += op.end_ps >= 0 ? 1 : 0;
    return {done, static_cast<double>(compute->ops().size()), "ops"};
  }
  if (const InferenceDriver* inference = experiment.inference()) {
    const InferenceWorkload& w = inference->workload();
    double done = 0;
    for (const Request& r : inference->requests()) {
      const bool measured =
          r.index >= w.warmup_requests && r.index < w.warmup_requests + w.measured_requests;
      done += measured && r.finished() ? 1 : 0;
    }
    return {done, static_cast<double>(w.measured_requests), "measured requests"};
  }
  const ExperimentConfig& config = experiment.config();
  if (config.poisson.empty() && !config.flows.empty()) {
    double done = 0;
    for (const FlowRecord& r : experiment.recorder().records()) {
      done += r.spec.id < config.flows.size() && r.complete() ? 1 : 0;
    }
    return {done, static_cast<double>(config.flows.size()), "flows"};
  }
  return {};
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
                    m.expected, m.unit, sim_s * 1e3, rate / 1e6,
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
