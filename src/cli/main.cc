// safs-sim: run, sweep, validate and document scenario files.
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include "cli/compare.h"
#include "cli/fct_table.h"
#include "cli/option_suggestions.h"
#include "cli/run_command.h"
#include "console/bad_input.h"
#include "scenario/reference.h"
#include "scenario/scenario.h"
#include "sweep/sweep.h"
#include "transport/registry.h"

namespace {

constexpr int kExitBadInput = 2;

// --quiet / --verbose on a subcommand, resolved after parsing.
struct VerbosityFlags {
  bool quiet = false;
  bool verbose = false;
  void add_to(CLI::App* cmd) {
    cmd->add_flag("--quiet,-q", quiet, "Print nothing on success");
    cmd->add_flag("--verbose,-v", verbose, "Print the configuration and more detail");
  }
  safs::console::Verbosity level() const {
    if (quiet) return safs::console::Verbosity::kQuiet;
    return verbose ? safs::console::Verbosity::kVerbose : safs::console::Verbosity::kNormal;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"safs-sim: packet-level simulator for slack-aware flow scheduling"};
  app.require_subcommand(1);

  safs::cli::RunOptions run_options;
  VerbosityFlags run_verbosity;
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
  run_cmd
      ->add_option("--queue-sample-us", run_options.queue_sample_us,
                   "Also write queues.csv: switch queue depths every this many simulated us")
      ->check(CLI::PositiveNumber);
  run_cmd->add_option("--trace", run_options.trace.path,
                      "Also write a Chrome trace-event JSON timeline (Perfetto) to this file");
  run_cmd
      ->add_option("--trace-from-ms", run_options.trace.from_ms,
                   "Trace only from this simulated time")
      ->check(CLI::NonNegativeNumber);
  run_cmd
      ->add_option("--trace-to-ms", run_options.trace.to_ms, "Trace only up to this simulated time")
      ->check(CLI::NonNegativeNumber);
  run_cmd
      ->add_option("--trace-max-events", run_options.trace.max_events,
                   "At most this many trace events; the trace then ends early, marked truncated")
      ->capture_default_str();
  run_cmd
      ->add_option("--trace-ports", run_options.trace.ports,
                   "Queue counters in the trace: hosts, switches, none or port names a,b")
      ->capture_default_str();
  run_cmd
      ->add_option("--trace-sample-us", run_options.trace.sample_us,
                   "Trace queue counters sampled every this many simulated us")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  run_verbosity.add_to(run_cmd);

  safs::sweep::SweepOptions sweep_options;
  std::string sweep_transport;
  std::int64_t sweep_seed = -1;
  VerbosityFlags sweep_verbosity;
  CLI::App* sweep_cmd = app.add_subcommand(
      "sweep", "Run a grid of points in parallel; skip finished ones; write one CSV");
  sweep_cmd->add_option("file", sweep_options.file, "Scenario file (TOML), may have [sweep]")
      ->required();
  sweep_cmd
      ->add_option("--grid", sweep_options.grid,
                   "Grid axis key=v1,v2,... (repeatable; replaces the file's axis of that key)")
      ->allow_extra_args(false);
  sweep_cmd->add_option("--set", sweep_options.overrides, "Override a key in every point")
      ->allow_extra_args(false);
  sweep_cmd->add_option("--transport", sweep_transport, "Override transport.name");
  sweep_cmd->add_option("--seed", sweep_seed, "Override simulation.seed")
      ->check(CLI::NonNegativeNumber);
  sweep_cmd
      ->add_option("--metric", sweep_options.metrics,
                   "summary.json path for the CSV (repeatable; replaces sweep.metrics)")
      ->allow_extra_args(false);
  sweep_cmd->add_option("--out", sweep_options.out_dir,
                        "Output directory (default out/sweep-STEM)");
  sweep_cmd
      ->add_option("--jobs,-j", sweep_options.jobs,
                   "Points run at once (default: the cores, shared among MPI ranks on a host)")
      ->check(CLI::PositiveNumber);
  sweep_verbosity.add_to(sweep_cmd);

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

  safs::cli::CompareOptions compare_options;
  CLI::App* compare_cmd =
      app.add_subcommand("compare", "Tabulate the summary.json of several runs (markdown)");
  compare_cmd->add_option("dirs", compare_options.dirs, "Run or sweep output directories")
      ->required();
  compare_cmd
      ->add_option("--metric", compare_options.metrics,
                   "path.in.summary[:label[:scale]] (repeatable; default: incast metrics)")
      ->allow_extra_args(false);
  compare_cmd->add_option("--baseline", compare_options.baseline,
                          "Run directory or transport: show each value's ratio to it");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    if (code != 0) safs::cli::suggest_options(app, argc, argv);
    return code == 0 ? 0 : kExitBadInput;
  }

  try {
    if (*run_cmd) {
      run_options.verbosity = run_verbosity.level();
      return safs::cli::run(run_options);
    }
    if (*sweep_cmd) {
      sweep_options.overrides =
          safs::cli::all_overrides(sweep_options.overrides, sweep_transport, sweep_seed);
      sweep_options.verbosity = sweep_verbosity.level();
      return safs::sweep::run_sweep(sweep_options);
    }
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
    if (*compare_cmd) return safs::cli::compare(compare_options);
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
  } catch (const safs::console::BadInput& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
