// safs-sim: run, validate and document scenario files.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>

#include "cli/compare.h"
#include "cli/fct_table.h"
#include "experiment/inference_report.h"
#include "experiment/report.h"
#include "metrics/summary.h"
#include "scenario/reference.h"
#include "scenario/scenario.h"
#include "transport/registry.h"

namespace {

constexpr int kExitBadInput = 2;

struct RunOptions {
  std::string file;
  std::string transport;
  std::int64_t seed = -1;
  std::vector<std::string> overrides;
  std::string out_dir;
  bool quiet = false;
};

std::vector<std::string> all_overrides(const RunOptions& o) {
  std::vector<std::string> result = o.overrides;
  if (!o.transport.empty()) result.push_back("transport.name=\"" + o.transport + "\"");
  if (o.seed >= 0) result.push_back("simulation.seed=" + std::to_string(o.seed));
  return result;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

int run(const RunOptions& o) {
  safs::ExperimentConfig config = safs::load_scenario(o.file, all_overrides(o));
  std::string out_dir = o.out_dir;
  if (out_dir.empty()) {
    out_dir = "out/" + std::filesystem::path(o.file).stem().string() + "-" + config.transport;
  }
  std::filesystem::create_directories(out_dir);

  safs::Experiment experiment(std::move(config));
  const double wall_s = experiment.run();
  safs::write_flows_csv(experiment, out_dir + "/flows.csv");
  safs::write_ops_csv(experiment, out_dir + "/ops.csv");
  if (const safs::InferenceDriver* inference = experiment.inference()) {
    safs::write_requests_csv(*inference, out_dir + "/requests.csv");
    safs::write_steps_csv(*inference, out_dir + "/steps.csv");
  }
  safs::write_summary_json(experiment, {o.file, read_file(o.file), wall_s},
                           out_dir + "/summary.json");

  const safs::FlowSummary s =
      safs::summarize(experiment.recorder().records(), experiment.sim().now());
  if (!o.quiet && experiment.inference() != nullptr) {
    const safs::TpotSummary tpot = safs::summarize_tpot(*experiment.inference());
    std::printf("%s: %zu requests, TPOT p50 %.3f ms, p99 %.3f ms, %zu decode steps\n",
                experiment.config().transport.c_str(), tpot.requests, tpot.p50_s * 1e3,
                tpot.p99_s * 1e3, experiment.inference()->steps().size());
  }
  if (!o.quiet) {
    std::printf("%s: %zu/%zu flows complete, last at %.3f ms, mean FCT %.3f ms, p99 slowdown %.2f",
                experiment.config().transport.c_str(), s.completed, s.flows, s.last_finish_s * 1e3,
                s.fct_mean_s * 1e3, s.slowdown_p99);
    if (s.with_deadline > 0)
      std::printf(", deadlines met %zu/%zu", s.met_deadline, s.with_deadline);
    std::printf("\n  %.2f s wall, %.2f M events/s -> %s\n", wall_s,
                static_cast<double>(experiment.sim().events_processed()) / wall_s / 1e6,
                out_dir.c_str());
  }
  std::size_t unfinished_listed = 0;
  for (const safs::FlowRecord& r : experiment.recorder().records()) {
    if (r.spec.id < experiment.config().flows.size() && !r.complete()) ++unfinished_listed;
  }
  if (unfinished_listed > 0) {
    std::fprintf(stderr, "warning: %zu flows did not complete by simulation.stop_ms\n",
                 unfinished_listed);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"safs-sim: packet-level simulator for slack-aware flow scheduling"};
  app.require_subcommand(1);

  RunOptions run_options;
  CLI::App* run_cmd =
      app.add_subcommand("run", "Run a scenario and write flows.csv and summary.json");
  run_cmd->add_option("file", run_options.file, "Scenario file (TOML)")->required();
  run_cmd->add_option("--transport", run_options.transport, "Override transport.name");
  run_cmd->add_option("--seed", run_options.seed, "Override simulation.seed")
      ->check(CLI::NonNegativeNumber);
  run_cmd->add_option("--set", run_options.overrides, "Override any key: section.key=value")
      ->allow_extra_args(false);
  run_cmd->add_option("--out", run_options.out_dir,
                      "Output directory (default out/STEM-TRANSPORT)");
  run_cmd->add_flag("--quiet,-q", run_options.quiet, "Print nothing on success");

  std::string validate_file;
  std::vector<std::string> validate_overrides;
  CLI::App* validate_cmd =
      app.add_subcommand("validate", "Check a scenario file without running it");
  validate_cmd->add_option("file", validate_file, "Scenario file (TOML)")->required();
  validate_cmd->add_option("--set", validate_overrides, "Override any key: section.key=value")
      ->allow_extra_args(false);

  CLI::App* reference_cmd =
      app.add_subcommand("reference", "Print the scenario key reference (docs/scenario-format.md)");
  CLI::App* transports_cmd = app.add_subcommand("transports", "List the transports");

  std::vector<std::string> fct_dirs;
  std::vector<std::uint64_t> fct_edges = {100'000, 1'000'000, 10'000'000};
  CLI::App* fct_cmd = app.add_subcommand(
      "fct", "FCT slowdown by flow size from several runs' flows.csv (markdown)");
  fct_cmd->add_option("dirs", fct_dirs, "Run output directories")->required();
  fct_cmd->add_option("--buckets", fct_edges,
                      "Bucket edges in bytes (default 100000 1000000 10000000)");

  std::vector<std::string> compare_dirs, compare_metrics;
  CLI::App* compare_cmd =
      app.add_subcommand("compare", "Tabulate the summary.json of several runs (markdown)");
  compare_cmd->add_option("dirs", compare_dirs, "Run output directories")->required();
  compare_cmd
      ->add_option("--metric", compare_metrics,
                   "path.in.summary[:label[:scale]] (repeatable; default: incast metrics)")
      ->allow_extra_args(false);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }

  try {
    if (*run_cmd) return run(run_options);
    if (*validate_cmd) {
      const safs::ExperimentConfig config = safs::load_scenario(validate_file, validate_overrides);
      std::printf("%s: ok (%d hosts, %zu flows, transport %s)\n", validate_file.c_str(),
                  config.topology.num_hosts(), config.flows.size(), config.transport.c_str());
      return 0;
    }
    if (*reference_cmd) {
      std::cout << safs::scenario_reference_markdown();
      return 0;
    }
    if (*compare_cmd) return safs::cli::compare(compare_dirs, compare_metrics);
    if (*fct_cmd) return safs::cli::fct_table(fct_dirs, fct_edges);
    if (*transports_cmd) {
      for (const safs::TransportInfo& t : safs::all_transports()) {
        std::printf("%-8s %s\n", std::string(t.name).c_str(), std::string(t.summary).c_str());
      }
      return 0;
    }
  } catch (const safs::ScenarioError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
