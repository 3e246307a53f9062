#include "run_in_memory.h"

#include <chrono>
#include <memory>
#include <optional>
#include <stdexcept>

#include "cli/memory_estimate.h"
#include "cli/queue_sampler.h"
#include "console/bad_input.h"
#include "console/effective_scenario.h"
#include "experiment/report.h"
#include "scenario/scenario.h"
#include "timeline/sampler_fanout.h"
#include "version/version.h"

namespace safs::python {

RunFiles run_in_memory(const RunRequest& r) {
  const auto setup_start = std::chrono::steady_clock::now();
  RunFiles out;
  ScenarioNotes notes;
  ExperimentConfig config = parse_scenario(r.scenario_text, r.scenario_name, r.overrides, &notes);
  if (r.add_workloads) r.add_workloads(config);
  for (const std::string& w : notes.warnings) out.warnings.push_back(r.scenario_name + ": " + w);
  cli::check_memory(cli::estimate_memory(config), r.scenario_name, 0);
  const console::EffectiveScenario effective(r.scenario_text, r.overrides);

  std::optional<Experiment> built;
  try {
    built.emplace(std::move(config));
  } catch (const std::invalid_argument& e) {
    throw console::BadInput(r.scenario_name + ": " + e.what());
  }
  Experiment& experiment = *built;
  timeline::SamplerFanout samplers(experiment.sim());
  std::unique_ptr<cli::QueueSampler> queues;
  if (r.queue_sample_us > 0) {
    queues = std::make_unique<cli::QueueSampler>(experiment, samplers, us_to_ps(r.queue_sample_us));
  }
  const double setup_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
  const double wall_s = experiment.run();

  const RunReport report = experiment.report();
  out.files.emplace_back("flows.csv", flows_csv_text(experiment));
  for (const auto& [name, contents] : report.files) out.files.emplace_back(name, contents);
  if (queues) out.files.emplace_back("queues.csv", queues->csv_text());
  const Provenance provenance{r.command_line,      r.overrides,         effective.fingerprint(),
                              effective.text_hash, version(),           source_commit(),
                              host_name(),         notes.effective_toml};
  const RunInfo info{r.scenario_name, r.scenario_text, wall_s, setup_wall_s, provenance};
  out.files.emplace_back("summary.json", summary_json_text(experiment, report, info));
  for (const auto& workload : experiment.workloads()) {
    const std::string note = workload->unfinished_note();
    if (!note.empty()) out.warnings.push_back(note);
  }
  return out;
}

}  // namespace safs::python
