#include "experiment/report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

#include "experiment/flows_csv.h"
#include "metrics/summary.h"

namespace safs {

void write_file_atomically(const std::string& path, const std::string& contents) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(tmp + ": cannot open for writing");
    out << contents;
    out.flush();
    if (!out) throw std::runtime_error(tmp + ": write failed");
  }
  std::filesystem::rename(tmp, path);
}

namespace {

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

void write_report_files(const RunReport& report, const std::string& dir) {
  for (const auto& [name, contents] : report.files)
    write_file_atomically(dir + "/" + name, contents);
}

std::string flows_csv_text(const Experiment& experiment) {
  std::string csv = flows_csv_header();
  for (const FlowRecord& r : experiment.recorder().records()) append_flows_csv_line(csv, r);
  return csv;
}

void write_flows_csv(const Experiment& experiment, const std::string& path) {
  write_file_atomically(path, flows_csv_text(experiment));
}

namespace {

nlohmann::ordered_json flow_json(const FlowSummary& s) {
  nlohmann::ordered_json j = {{"total", s.flows}, {"completed", s.completed}};
  if (s.completed == 0) {  // no FCT statistics to report
    j["delivered_bytes"] = s.delivered_bytes;
    j["delivered_gbps"] = s.delivered_gbps;
  } else {
    j.update(nlohmann::ordered_json{{"fct_mean_s", s.fct_mean_s},
                                    {"fct_p50_s", s.fct_p50_s},
                                    {"fct_p99_s", s.fct_p99_s},
                                    {"fct_max_s", s.fct_max_s},
                                    {"slowdown_mean", s.slowdown_mean},
                                    {"slowdown_p50", s.slowdown_p50},
                                    {"slowdown_p99", s.slowdown_p99},
                                    {"last_finish_s", s.last_finish_s},
                                    {"goodput_gbps", s.goodput_gbps},
                                    {"delivered_bytes", s.delivered_bytes},
                                    {"delivered_gbps", s.delivered_gbps}});
  }
  if (s.with_deadline > 0) {
    j["with_deadline"] = s.with_deadline;
    j["met_deadline"] = s.met_deadline;
    j["missed_deadline"] = s.with_deadline - s.met_deadline;
    j["mean_lateness_s"] = s.mean_lateness_s;
    j["max_lateness_s"] = s.max_lateness_s;
  }
  return j;
}

}  // namespace

double busiest_downlink_utilisation(Experiment& experiment) {
  const FlowRecorder& recorder = experiment.recorder();
  const TimePs first_start = std::min(recorder.totals(FlowClass::kUrgent).first_start_ps,
                                      recorder.totals(FlowClass::kBackground).first_start_ps);
  const TimePs span = experiment.sim().now() - first_start;
  if (first_start == kTimeNever || span <= 0) return 0;
  double best = 0;
  const Network& net = experiment.network();
  for (std::size_t i = 0; i < net.ports().size(); ++i) {
    if (net.port_at_host(i) || !net.port_to_host(i)) continue;
    best = std::max(
        best, static_cast<double>(net.ports()[i]->stats().busy_ps) / static_cast<double>(span));
  }
  return best;
}

std::string summary_json_text(Experiment& experiment, const RunReport& report,
                              const RunInfo& info) {
  const ExperimentConfig& config = experiment.config();
  const TimePs now = experiment.sim().now();
  const FlowRecorder& recorder = experiment.recorder();
  const NetworkTotals net = experiment.network_totals();
  const TransportStats transport = experiment.transport().stats();
  const auto events = experiment.sim().events_processed();

  nlohmann::ordered_json j;
  j["scenario"] = {{"path", info.scenario_path}, {"text", info.scenario_text}};
  j["transport"] = config.transport;
  if (config.mixed_tenants()) j["background_transport"] = config.background_transport;
  j["seed"] = config.seed;
  j["simulated_s"] = ps_to_sec(now);
  j["wall_s"] = info.setup_wall_seconds + info.wall_seconds;
  j["setup_wall_s"] = info.setup_wall_seconds;
  j["run_wall_s"] = info.wall_seconds;
  j["events"] = events;
  j["events_per_s"] = info.wall_seconds > 0 ? static_cast<double>(events) / info.wall_seconds : 0;
  j["peak_rss_mib"] = static_cast<double>(peak_rss_kib()) / 1024.0;
  j["flows"] = flow_json(recorder.summary(now));
  for (const FlowClass c : {FlowClass::kUrgent, FlowClass::kBackground}) {
    const FlowSummary s = recorder.summary(now, &c);
    if (s.flows == 0) continue;
    nlohmann::ordered_json cj = nlohmann::ordered_json::object();
    if (config.mixed_tenants()) {
      cj["transport"] =
          c == FlowClass::kBackground ? config.background_transport : config.transport;
    }
    cj.update(flow_json(s));
    const FlowTotals totals = recorder.totals(c);
    const std::uint64_t control = totals.control_packets, data = totals.data_packets;
    cj["control_packets_per_flow"] = static_cast<double>(control) / static_cast<double>(s.flows);
    cj["control_per_100_data_packets"] =
        data > 0 ? 100.0 * static_cast<double>(control) / static_cast<double>(data) : 0.0;
    j[std::string(to_string(c))] = cj;
  }
  for (const auto& [key, section] : report.summary_sections.items()) j[key] = section;
  j["network"] = {{"packet_hops", net.packet_hops},
                  {"queue_drops", net.queue_drops},
                  {"wire_losses", net.wire_losses},
                  {"ecn_marks", net.ecn_marks},
                  {"max_switch_queue_bytes", net.max_switch_queue_bytes},
                  {"busiest_receiver_link_utilisation", busiest_downlink_utilisation(experiment)}};
  j["transport_stats"] = {{"data_packets", transport.data_packets},
                          {"retransmissions", transport.retransmissions},
                          {"timeouts", transport.timeouts},
                          {"control_packets", transport.control_packets},
                          {"control_bytes", transport.control_bytes},
                          {"scheduling_packets", transport.scheduling_packets},
                          {"duplicate_packets", transport.duplicate_packets}};
  for (const MechanismCount& count : experiment.transport().mechanism_stats()) {
    j["transport_stats"][count.name] = count.value;
  }
  const Provenance& p = info.provenance;
  j["provenance"] = {{"tool_version", p.tool_version},
                     {"source_commit", p.source_commit},
                     {"command_line", p.command_line},
                     {"host", p.host},
                     {"scenario_fingerprint", p.scenario_fingerprint},
                     {"scenario_text_hash", p.scenario_text_hash},
                     {"overrides", p.overrides},
                     {"effective",
                      {{"transport", config.transport},
                       {"seed", config.seed},
                       {"scenario_toml", p.effective_scenario_toml}}}};
  if (config.mixed_tenants()) {
    j["provenance"]["effective"]["background_transport"] = config.background_transport;
  }
  return j.dump(2) + "\n";
}

void write_summary_json(Experiment& experiment, const RunReport& report, const RunInfo& info,
                        const std::string& path) {
  write_file_atomically(path, summary_json_text(experiment, report, info));
}

}  // namespace safs
