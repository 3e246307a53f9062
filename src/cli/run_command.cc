#include "cli/run_command.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "capture/pcap_writer.h"
#include "cli/memory_estimate.h"
#include "cli/queue_sampler.h"
#include "cli/run_outputs.h"
#include "cli/run_progress.h"
#include "console/bad_input.h"
#include "console/effective_scenario.h"
#include "console/progress_line.h"
#include "console/scenario_file.h"
#include "experiment/flows_csv_file.h"
#include "experiment/report.h"
#include "metrics/summary.h"
#include "scenario/scenario.h"
#include "timeline/sampler_fanout.h"
#include "timeline/timeline_trace.h"
#include "timeline/trace_ports.h"
#include "version/version.h"
#include "workload/inference/inference_report.h"

namespace safs::cli {

namespace {

// About a second of building per million ports (bench/README.md): say so
// beyond that, rather than sit silent.
constexpr std::uint64_t kPortsWorthANotice = 1'000'000;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

Provenance provenance_of(const RunOptions& o, const std::vector<std::string>& overrides,
                         const console::EffectiveScenario& effective, const ScenarioNotes& notes) {
  return {o.command_line,  overrides,   effective.fingerprint(), effective.text_hash, version(),
          source_commit(), host_name(), notes.effective_toml};
}

void print_transport_params(const std::string& name, const Settings& params) {
  for (const auto& [key, value] : params) {
    std::fprintf(stderr, "  transport.%s.%s = %s\n", name.c_str(), key.c_str(),
                 value_text(value).c_str());
  }
}

void print_configuration(const ExperimentConfig& c) {
  std::fprintf(stderr, "transport %s, seed %llu, %d hosts, %s, stop at %.3f ms\n",
               c.transport.c_str(), static_cast<unsigned long long>(c.seed), c.topology.num_hosts(),
               c.workloads.describe().c_str(), ps_to_sec(c.stop_ps) * 1e3);
  print_transport_params(c.transport, c.transport_params);
  if (!c.mixed_tenants()) return;
  std::fprintf(stderr, "background flows on transport %s\n", c.background_transport.c_str());
  print_transport_params(c.background_transport, c.background_transport_params);
}

void print_class_summaries(Experiment& experiment) {
  for (const FlowClass c : {FlowClass::kUrgent, FlowClass::kBackground}) {
    const FlowSummary s = experiment.recorder().summary(experiment.sim().now(), &c);
    if (s.flows == 0) continue;
    std::printf("  %s: %zu/%zu complete, mean FCT %.3f ms, p99 FCT %.3f ms, p99 slowdown %.2f",
                std::string(to_string(c)).c_str(), s.completed, s.flows, s.fct_mean_s * 1e3,
                s.fct_p99_s * 1e3, s.slowdown_p99);
    if (s.with_deadline > 0)
      std::printf(", deadlines met %zu/%zu", s.met_deadline, s.with_deadline);
    std::printf("\n");
  }
}

// --pcap PORTS FILE: a tap on each chosen port, before the run starts.
std::unique_ptr<capture::PcapWriter> start_capture(Experiment& experiment,
                                                   const std::vector<std::string>& pcap) {
  if (pcap.empty()) return nullptr;
  Network& net = experiment.network();
  const timeline::TracePortSelection ports = timeline::select_trace_ports(net, pcap[0], "--pcap");
  if (ports.ports.empty()) throw console::BadInput("--pcap " + pcap[0] + ": no port to capture");
  // Homa runs over IP directly in its module; UDP stands in for its header.
  const capture::Layer4 layer4 =
      experiment.config().transport == "homa" ? capture::Layer4::kUdp : capture::Layer4::kTcp;
  std::unique_ptr<capture::PcapWriter> writer;
  try {
    writer = std::make_unique<capture::PcapWriter>(pcap[1], layer4);
  } catch (const std::runtime_error& e) {
    throw console::BadInput("--pcap " + pcap[1] + ": " + e.what());
  }
  for (const std::size_t i : ports.ports) net.ports()[i]->set_tap(writer.get());
  return writer;
}

void finish_capture(capture::PcapWriter& pcap, const std::string& path, bool quiet) {
  pcap.finish();
  if (quiet) return;
  std::fprintf(stderr, "pcap: %llu packets -> %s\n",
               static_cast<unsigned long long>(pcap.packets()), path.c_str());
}

}  // namespace

std::vector<std::string> all_overrides(const std::vector<std::string>& overrides,
                                       const std::string& transport, std::int64_t seed) {
  std::vector<std::string> result = overrides;
  if (!transport.empty()) result.push_back("transport.name=\"" + transport + "\"");
  if (seed >= 0) result.push_back("simulation.seed=" + std::to_string(seed));
  return result;
}

int run(const RunOptions& o) {
  const auto setup_start = std::chrono::steady_clock::now();
  console::check_scenario_file(o.file);
  const std::vector<std::string> overrides = all_overrides(o.overrides, o.transport, o.seed);
  ScenarioNotes notes;
  ExperimentConfig config = load_scenario(o.file, overrides, &notes);
  for (const std::string& w : notes.warnings)
    std::fprintf(stderr, "warning: %s: %s\n", o.file.c_str(), w.c_str());
  const MemoryEstimate memory = estimate_memory(config);
  check_memory(memory, o.file, o.memory_limit_gb);
  const std::string scenario_text = read_file(o.file);
  const console::EffectiveScenario effective(scenario_text, overrides);
  const std::string out_dir =
      o.out_given ? o.out_dir
                  : default_output_dir(o.file, config.transport, effective.fingerprint());
  check_trace_path(o.trace.path, o.file, o.force);
  if (!o.pcap.empty()) check_new_output_file("--pcap", o.pcap[1]);
  if (o.verbosity == console::Verbosity::kVerbose) print_configuration(config);

  if (memory.network_ports >= kPortsWorthANotice && o.verbosity != console::Verbosity::kQuiet) {
    std::fprintf(
        stderr,
        "building a network of %d hosts and %llu ports (about %s of memory): this takes seconds\n",
        config.topology.num_hosts(), static_cast<unsigned long long>(memory.network_ports),
        format_bytes(memory.total_bytes()).c_str());
  }
  // Built before the output directory is touched: a configuration the
  // transport or the network refuses leaves nothing behind.
  std::optional<Experiment> built;
  try {
    built.emplace(std::move(config));
  } catch (const std::invalid_argument& e) {
    throw console::BadInput(o.file + ": " + e.what());
  }
  Experiment& experiment = *built;
  std::unique_ptr<capture::PcapWriter> pcap = start_capture(experiment, o.pcap);
  prepare_output_dir(out_dir, o.force);
  console::ProgressLine progress(o.verbosity != console::Verbosity::kQuiet);
  if (progress.active()) install_progress(experiment, progress);
  timeline::SamplerFanout samplers(experiment.sim());
  std::unique_ptr<QueueSampler> queues;
  if (o.queue_sample_us > 0) {
    queues = std::make_unique<QueueSampler>(experiment, samplers, us_to_ps(o.queue_sample_us));
  }
  std::unique_ptr<timeline::TimelineTrace> trace;
  if (!o.trace.path.empty())
    trace = std::make_unique<timeline::TimelineTrace>(experiment, samplers, o.trace);
  // flows.csv is written as flows finish, so the run holds only the live
  // flows' records; a trace draws every flow, so it keeps them all.
  std::unique_ptr<FlowsCsvFile> flows_csv;
  if (!trace) {
    flows_csv = std::make_unique<FlowsCsvFile>(out_dir + "/flows.csv");
    experiment.stream_records([&flows_csv](const FlowRecord& r) { flows_csv->add(r); });
  }
  const double setup_wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - setup_start).count();
  const double wall_s = experiment.run();
  progress.clear();

  const RunReport report = experiment.report();
  if (flows_csv) {
    flows_csv->finish(experiment.recorder());
  } else {
    write_flows_csv(experiment, out_dir + "/flows.csv");
  }
  write_report_files(report, out_dir);
  if (queues) queues->write_csv(out_dir + "/queues.csv");
  // Last of the results: a directory with summary.json holds a finished run
  // (sweeps rely on it). The trace comes after, so its failure loses no result.
  RunInfo info{o.file, scenario_text, wall_s, setup_wall_s,
               provenance_of(o, overrides, effective, notes)};
  write_summary_json(experiment, report, info, out_dir + "/summary.json");
  if (trace) trace->finish();
  if (pcap) finish_capture(*pcap, o.pcap[1], o.verbosity == console::Verbosity::kQuiet);

  const InferenceDriver* inference = experiment.find_workload<InferenceDriver>();
  if (o.verbosity != console::Verbosity::kQuiet && inference != nullptr) {
    const TpotSummary tpot = summarize_tpot(*inference);
    std::printf("%s: %zu requests, TPOT p50 %.3f ms, p99 %.3f ms\n",
                experiment.config().transport.c_str(), tpot.requests, tpot.p50_s * 1e3,
                tpot.p99_s * 1e3);
  }
  if (o.verbosity != console::Verbosity::kQuiet) {
    const FlowSummary s = experiment.recorder().summary(experiment.sim().now());
    std::printf("%s: %zu/%zu flows complete, last at %.3f ms, mean FCT %.3f ms, p99 slowdown %.2f",
                experiment.config().transport.c_str(), s.completed, s.flows, s.last_finish_s * 1e3,
                s.fct_mean_s * 1e3, s.slowdown_p99);
    if (s.with_deadline > 0)
      std::printf(", deadlines met %zu/%zu", s.met_deadline, s.with_deadline);
    std::printf("; %.2f s wall, %.2f M events/s -> %s\n", wall_s,
                static_cast<double>(experiment.sim().events_processed()) / wall_s / 1e6,
                out_dir.c_str());
  }
  if (o.verbosity == console::Verbosity::kVerbose) {
    print_class_summaries(experiment);
    // What the run still held at its end: the live flows, not all it saw.
    std::printf("  held at the end: %zu flows' transport state, %zu of %zu flow records\n",
                experiment.transport().live_flows(), experiment.recorder().held(),
                experiment.recorder().size());
  }
  for (const auto& workload : experiment.workloads()) {
    const std::string note = workload->unfinished_note();
    if (!note.empty()) std::fprintf(stderr, "warning: %s: %s\n", out_dir.c_str(), note.c_str());
  }
  return 0;
}

}  // namespace safs::cli
