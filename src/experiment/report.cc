#include "experiment/report.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

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

// Fixed formatting so that outputs are byte-identical across runs.
std::string seconds(TimePs t) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9f", ps_to_sec(t));
  return buf;
}

long peak_rss_kib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

void write_flows_csv(const Experiment& experiment, const std::string& path) {
  std::ostringstream csv;
  csv << "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,deadline_s,"
         "met_deadline,class\n";
  for (const FlowRecord& r : experiment.recorder().records()) {
    const FlowSpec& f = r.spec;
    csv << f.id << ',' << f.src << ',' << f.dst << ',' << f.size_bytes << ',' << seconds(f.start_ps)
        << ',';
    if (r.complete()) {
      char slow[32];
      std::snprintf(slow, sizeof slow, "%.6f", r.slowdown());
      csv << seconds(r.finish_ps) << ',' << seconds(r.fct_ps()) << ',' << seconds(r.ideal_fct_ps)
          << ',' << slow << ',';
    } else {
      csv << ",," << seconds(r.ideal_fct_ps) << ",,";
    }
    if (f.has_deadline()) {
      csv << seconds(f.deadline_ps) << ',' << (r.met_deadline() ? "true" : "false");
    } else {
      csv << ',';
    }
    csv << ',' << to_string(f.flow_class) << '\n';
  }
  write_file_atomically(path, csv.str());
}

void write_summary_json(Experiment& experiment, const RunInfo& info, const std::string& path) {
  const ExperimentConfig& config = experiment.config();
  const FlowSummary flows = summarize(experiment.recorder().records());
  const NetworkTotals net = experiment.network_totals();
  const TransportStats transport = experiment.transport().stats();
  const double sim_s = ps_to_sec(experiment.sim().now());
  const auto events = experiment.sim().events_processed();

  nlohmann::ordered_json j;
  j["scenario"] = {{"path", info.scenario_path}, {"text", info.scenario_text}};
  j["transport"] = config.transport;
  j["seed"] = config.seed;
  j["simulated_s"] = sim_s;
  j["wall_s"] = info.wall_seconds;
  j["events"] = events;
  j["events_per_s"] = info.wall_seconds > 0 ? static_cast<double>(events) / info.wall_seconds : 0;
  j["peak_rss_mib"] = static_cast<double>(peak_rss_kib()) / 1024.0;
  j["flows"] = {{"total", flows.flows},
                {"completed", flows.completed},
                {"with_deadline", flows.with_deadline},
                {"met_deadline", flows.met_deadline},
                {"fct_mean_s", flows.fct_mean_s},
                {"fct_p50_s", flows.fct_p50_s},
                {"fct_p99_s", flows.fct_p99_s},
                {"fct_max_s", flows.fct_max_s},
                {"slowdown_mean", flows.slowdown_mean},
                {"slowdown_p50", flows.slowdown_p50},
                {"slowdown_p99", flows.slowdown_p99},
                {"last_finish_s", flows.last_finish_s},
                {"goodput_gbps", flows.goodput_gbps}};
  j["network"] = {{"packet_hops", net.packet_hops},
                  {"queue_drops", net.queue_drops},
                  {"wire_losses", net.wire_losses},
                  {"ecn_marks", net.ecn_marks},
                  {"max_switch_queue_bytes", net.max_switch_queue_bytes}};
  j["transport_stats"] = {{"data_packets", transport.data_packets},
                          {"retransmissions", transport.retransmissions},
                          {"timeouts", transport.timeouts},
                          {"control_packets", transport.control_packets},
                          {"control_bytes", transport.control_bytes},
                          {"duplicate_packets", transport.duplicate_packets}};
  write_file_atomically(path, j.dump(2) + "\n");
}

}  // namespace safs
