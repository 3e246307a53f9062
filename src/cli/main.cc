// safs-sim: run, sweep, validate and document scenario files.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>

#include <CLI/CLI.hpp>

#include "base/input_error.h"
#include "cli/compare.h"
#include "cli/fct_table.h"
#include "cli/memory_estimate.h"
#include "cli/option_suggestions.h"
#include "cli/run_command.h"
#include "console/bad_input.h"
#include "console/scenario_file.h"
#include "scenario/reference.h"
#include "scenario/scenario.h"
#include "sweep/sweep.h"
#include "transport/registry.h"
#include "version/version.h"

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

// CLI11's own range checks print the type's limits (a 300-digit double).
// `highest` keeps a time within what integer picoseconds hold.
CLI::Validator number_at_least(double lowest, bool inclusive,
                               double highest = std::numeric_limits<double>::max()) {
  std::string bound = (inclusive ? ">= " : "> ") + CLI::detail::to_string(lowest);
  if (highest < std::numeric_limits<double>::max()) {
    bound += " and <= " + CLI::detail::to_string(highest);
  }
  const std::string wanted = "a number " + bound;
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        const bool in_range = (inclusive ? value >= lowest : value > lowest) && value <= highest;
        if (end == text.c_str() || *end != '\0' || !in_range) {
          return "expected " + wanted + ", got " + text;
        }
        return "";
      },
      "NUMBER " + bound);
}
const CLI::Validator kNonNegative = number_at_least(0, true);
const CLI::Validator kPositive = number_at_least(0, false);
// Simulated times: int64 picoseconds end at 9.2e6 s; these bounds stay well
// inside (a period of 1e12 us, a time of 1e9 ms: 1e6 s either).
const CLI::Validator kPeriodUs = number_at_least(0, false, 1e12);
const CLI::Validator kTimeMs = number_at_least(0, true, 1e9);

// One knob for run and validate; the environment variable reaches the runs
// a sweep starts.
void add_memory_limit(CLI::App* cmd, double& limit_gb) {
  cmd->add_option("--memory-limit-gb", limit_gb,
                  "Refuse a scenario estimated to need more memory than this (default: 3/4 of "
                  "this machine's)")
      ->envname("SAFS_MEMORY_LIMIT_GB")
      ->check(kPositive);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"safs-sim: packet-level simulator for slack-aware flow scheduling"};
  app.require_subcommand(1);
  app.set_version_flag("--version", safs::version_line("safs-sim"),
                       "Print the version and source commit");

  safs::cli::RunOptions run_options;
  VerbosityFlags run_verbosity;
  CLI::App* run_cmd =
      app.add_subcommand("run", "Run a scenario and write flows.csv and summary.json");
  run_cmd->add_option("file", run_options.file, "Scenario file (TOML)")->required();
  run_cmd->add_option("--transport", run_options.transport, "Override transport.name");
  run_cmd->add_option("--seed", run_options.seed, "Override simulation.seed")->check(kNonNegative);
  run_cmd->add_option("--set", run_options.overrides, "Override any key: section.key=value")
      ->allow_extra_args(false);
  CLI::Option* run_out = run_cmd->add_option(
      "--out", run_options.out_dir,
      "Output directory, empty or new (default out/STEM-TRANSPORT-HASH, HASH of the file's text "
      "and the overrides)");
  add_memory_limit(run_cmd, run_options.memory_limit_gb);
  run_cmd->add_flag("--force", run_options.force,
                    "Reuse a non-empty --out: remove an earlier run's outputs there, nothing "
                    "else; and replace an existing --trace file");
  run_cmd
      ->add_option("--queue-sample-us", run_options.queue_sample_us,
                   "Also write queues.csv: switch queue depths every this many simulated us")
      ->check(kPeriodUs);
  run_cmd->add_option(
      "--trace", run_options.trace.path,
      "Also write a Chrome trace-event JSON timeline (Perfetto) to this file (checked before "
      "the run; written after the results)");
  run_cmd
      ->add_option("--trace-from-ms", run_options.trace.from_ms,
                   "Trace only from this simulated time")
      ->check(kTimeMs);
  run_cmd
      ->add_option("--trace-to-ms", run_options.trace.to_ms, "Trace only up to this simulated time")
      ->check(kTimeMs);
  run_cmd
      ->add_option("--pcap", run_options.pcap,
                   "PORTS FILE: also write the packets these ports transmit as a pcap file (ports "
                   "as --trace-ports names them; never over an existing file)")
      ->expected(2)
      ->allow_extra_args(false);
  run_cmd
      ->add_option("--trace-max-events", run_options.trace.max_events,
                   "At most this many trace events; the trace then ends early, marked truncated")
      ->check(kPositive)
      ->capture_default_str();
  run_cmd
      ->add_option("--trace-ports", run_options.trace.ports,
                   "Queue counters in the trace: hosts, switches, none or port names a,b")
      ->capture_default_str();
  run_cmd
      ->add_option("--trace-sample-us", run_options.trace.sample_us,
                   "Trace queue counters sampled every this many simulated us")
      ->check(kPeriodUs)
      ->capture_default_str();
  run_verbosity.add_to(run_cmd);

  safs::sweep::SweepOptions sweep_options;
  std::string sweep_transport;
  std::int64_t sweep_seed = -1;
  VerbosityFlags sweep_verbosity;
  CLI::App* sweep_cmd = app.add_subcommand(
      "sweep",
      "Run a grid of points in parallel; reuse finished ones run with the same scenario; "
      "write one CSV. SIGINT/SIGTERM stop the running points and keep finished ones");
  sweep_cmd->add_option("file", sweep_options.file, "Scenario file (TOML), may have [sweep]")
      ->required();
  sweep_cmd
      ->add_option("--grid", sweep_options.grid,
                   "Grid axis key=v1,v2,... (repeatable; replaces the file's axis of that key)")
      ->allow_extra_args(false);
  sweep_cmd->add_option("--set", sweep_options.overrides, "Override a key in every point")
      ->allow_extra_args(false);
  sweep_cmd->add_option("--transport", sweep_transport, "Override transport.name");
  sweep_cmd->add_option("--seed", sweep_seed, "Override simulation.seed")->check(kNonNegative);
  sweep_cmd
      ->add_option("--metric", sweep_options.metrics,
                   "summary.json path for the CSV (repeatable; replaces sweep.metrics)")
      ->allow_extra_args(false);
  CLI::Option* sweep_out = sweep_cmd->add_option(
      "--out", sweep_options.out_dir,
      "Output directory (default out/sweep-STEM); finished points there are reused only if their "
      "scenario and overrides are the same");
  sweep_cmd
      ->add_option("--jobs,-j", sweep_options.jobs,
                   "Points run at once (default: the cores, shared among MPI ranks on a host)")
      ->check(kPositive);
  CLI::Option* sweep_shard =
      sweep_cmd
          ->add_option(
              "--shard", sweep_options.shard,
              "I/N: run only the points i with i % N == I (one task of an array job; no sweep.csv)")
          // Given empty, it would read as not given: the whole sweep.
          ->check(CLI::Validator(
              [](std::string& text) { return text.empty() ? std::string("expected I/N") : ""; },
              "I/N"));
  sweep_cmd
      ->add_flag("--collect", sweep_options.collect,
                 "Run nothing: write sweep.csv from the points the shards finished")
      ->excludes(sweep_shard);
  sweep_verbosity.add_to(sweep_cmd);

  std::string validate_file;
  std::vector<std::string> validate_overrides;
  CLI::App* validate_cmd =
      app.add_subcommand("validate", "Check a scenario file without running it");
  validate_cmd->add_option("file", validate_file, "Scenario file (TOML)")->required();
  validate_cmd->add_option("--set", validate_overrides, "Override any key: section.key=value")
      ->allow_extra_args(false);
  double validate_memory_limit_gb = 0;
  add_memory_limit(validate_cmd, validate_memory_limit_gb);

  CLI::App* reference_cmd =
      app.add_subcommand("reference", "Print the scenario key reference (docs/scenario-format.md)");
  CLI::App* transports_cmd = app.add_subcommand("transports", "List the transports");

  std::vector<std::string> fct_dirs;
  std::vector<std::uint64_t> fct_edges = {100'000, 1'000'000, 10'000'000};
  CLI::App* fct_cmd = app.add_subcommand(
      "fct", "FCT slowdown by flow size from several runs' flows.csv (markdown)");
  fct_cmd->add_option("dirs", fct_dirs, "Run output directories")->required();
  fct_cmd
      ->add_option("--buckets", fct_edges,
                   "Bucket edges in bytes (default 100000 1000000 10000000)")
      ->check(kPositive);

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
    // A bad value (--seed -1) is not a mistyped option name.
    if (code != 0 && dynamic_cast<const CLI::ValidationError*>(&e) == nullptr)
      safs::cli::suggest_options(app, argc, argv);
    return code == 0 ? 0 : kExitBadInput;
  }

  try {
    if (*run_cmd) {
      run_options.verbosity = run_verbosity.level();
      run_options.out_given = run_out->count() > 0;
      run_options.command_line.assign(argv, argv + argc);
      return safs::cli::run(run_options);
    }
    if (*sweep_cmd) {
      sweep_options.overrides =
          safs::cli::all_overrides(sweep_options.overrides, sweep_transport, sweep_seed);
      sweep_options.verbosity = sweep_verbosity.level();
      if (sweep_out->count() > 0 && sweep_options.out_dir.empty())
        throw safs::console::BadInput("--out: empty; expected a directory");
      return safs::sweep::run_sweep(sweep_options);
    }
    if (*validate_cmd) {
      safs::console::check_scenario_file(validate_file);
      safs::ScenarioNotes notes;
      const safs::ExperimentConfig config =
          safs::load_scenario(validate_file, validate_overrides, &notes);
      for (const std::string& w : notes.warnings) {
        std::fprintf(stderr, "warning: %s: %s\n", validate_file.c_str(), w.c_str());
      }
      const safs::cli::MemoryEstimate memory = safs::cli::estimate_memory(config);
      safs::cli::check_memory(memory, validate_file, validate_memory_limit_gb);
      const std::size_t points = safs::sweep::check_sweep_points(validate_file, validate_overrides);
      std::printf("%s: ok (%d hosts; %s; transport %s, about %s of memory", validate_file.c_str(),
                  config.topology.num_hosts(), config.workloads.describe().c_str(),
                  config.transport.c_str(), safs::cli::format_bytes(memory.total_bytes()).c_str());
      if (points > 1) std::printf("; %zu sweep points ok", points);
      std::printf(")\n");
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
        std::printf("%-12s %s\n", std::string(t.name).c_str(), std::string(t.summary).c_str());
      }
      return 0;
    }
  } catch (const safs::ScenarioError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const safs::console::BadInput& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const safs::InputError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
  return 0;
}
