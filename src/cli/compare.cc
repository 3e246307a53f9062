#include "cli/compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "console/bad_input.h"
#include "scenario/suggest.h"
#include "sweep/summary_file.h"
#include "sweep/sweep_grid.h"

namespace safs::cli {

namespace {

namespace fs = std::filesystem;

struct Metric {
  std::string path;
  std::string label;
  double scale = 1;
};

const std::vector<std::string> kDefaultMetrics = {
    "urgent.missed_deadline:urgent misses:1",
    "urgent.fct_mean_s:mean urgent FCT (ms):1000",
    "urgent.fct_p99_s:p99 urgent FCT (ms):1000",
    "urgent.mean_lateness_s:mean lateness (ms):1000",
    "background.delivered_gbps:background goodput (Gbit/s):1",
    "network.busiest_receiver_link_utilisation:receiver link utilisation:1",
    "urgent.control_packets_per_flow:control packets per urgent flow:1",
    "urgent.control_per_100_data_packets:control per 100 data packets:1",
};

Metric parse_metric(const std::string& text) {
  Metric m;
  std::stringstream in(text);
  std::getline(in, m.path, ':');
  std::getline(in, m.label, ':');
  std::string scale;
  if (std::getline(in, scale, ':')) {
    try {
      m.scale = std::stod(scale);
    } catch (const std::exception&) {
      m.scale = std::numeric_limits<double>::quiet_NaN();
    }
    if (!std::isfinite(m.scale)) {
      throw console::BadInput("--metric " + text + ": scale '" + scale + "' is not a number");
    }
  }
  if (m.path.empty()) {
    throw console::BadInput("--metric '" + text + "': expected PATH[:LABEL[:SCALE]]");
  }
  if (m.label.empty()) m.label = m.path;
  return m;
}

struct Run {
  std::string dir;
  nlohmann::ordered_json summary;
  std::string transport;
  std::string point_without_transport;  // sweep assignments other than the transport
};

Run load_run(const std::string& dir) {
  Run run{dir, sweep::read_summary(dir + "/summary.json"), "", ""};
  const auto transport = run.summary.find("transport");
  run.transport = transport != run.summary.end() && transport->is_string()
                      ? transport->get<std::string>()
                      : "?";
  for (const sweep::Assignment& a : sweep::read_point_file(dir)) {
    if (a.key != "transport.name") run.point_without_transport += a.key + "=" + a.value + ";";
  }
  return run;
}

// A run directory, or a sweep output directory: every point that has finished.
std::vector<Run> load_runs(const std::vector<std::string>& dirs) {
  std::vector<Run> runs;
  for (const std::string& dir : dirs) {
    if (fs::exists(fs::path(dir) / "summary.json") || !fs::is_directory(dir)) {
      runs.push_back(load_run(dir));
      continue;
    }
    std::vector<std::string> points;
    for (const fs::directory_entry& e : fs::directory_iterator(dir)) {
      if (fs::exists(e.path() / "summary.json")) points.push_back(e.path().string());
    }
    if (points.empty()) throw console::BadInput(dir + ": no summary.json, and no runs in it");
    std::sort(points.begin(), points.end());  // directory order is unspecified
    for (const std::string& p : points) runs.push_back(load_run(p));
  }
  return runs;
}

// For each run, the index of its baseline run, or -1 when it has none.
std::vector<int> baselines(const std::vector<Run>& runs, const std::string& baseline) {
  std::vector<int> result(runs.size(), -1);
  if (baseline.empty()) return result;
  if (fs::exists(fs::path(baseline) / "summary.json")) {
    const Run base = load_run(baseline);
    for (std::size_t i = 0; i < runs.size(); ++i) {
      if (fs::equivalent(runs[i].dir, base.dir)) result.assign(runs.size(), static_cast<int>(i));
    }
    if (result.front() < 0) {
      throw console::BadInput("--baseline " + baseline + ": not one of the compared runs");
    }
    return result;
  }
  std::map<std::string, int> base_of_point;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (runs[i].transport != baseline) continue;
    auto [it, inserted] =
        base_of_point.emplace(runs[i].point_without_transport, static_cast<int>(i));
    if (!inserted) {
      throw console::BadInput("--baseline " + baseline + ": both " + runs[it->second].dir +
                              " and " + runs[i].dir + " could be the baseline");
    }
  }
  if (base_of_point.empty()) {
    std::vector<std::string> transports;
    for (const Run& r : runs) transports.push_back(r.transport);
    throw console::BadInput("--baseline " + baseline +
                            ": neither a run directory nor the transport of a compared run" +
                            did_you_mean(baseline, transports));
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto it = base_of_point.find(runs[i].point_without_transport);
    if (it != base_of_point.end()) result[i] = it->second;
  }
  return result;
}

std::string cell(const nlohmann::ordered_json* v, const Metric& m) {
  char buf[64];
  if (v == nullptr || !v->is_number()) return "-";
  if (v->is_number_integer() && m.scale == 1) {
    std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v->get<std::int64_t>()));
  } else {
    std::snprintf(buf, sizeof buf, "%.3f", v->get<double>() * m.scale);
  }
  return buf;
}

std::string ratio(const nlohmann::ordered_json* v, const nlohmann::ordered_json* base) {
  if (v == nullptr || base == nullptr || !v->is_number() || !base->is_number()) return "";
  const double b = base->get<double>();
  if (b == 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, " (%.2fx)", v->get<double>() / b);
  return buf;
}

// A metric that no run has is most likely a typo: say so, with the closest path.
void warn_about_unknown_metrics(const std::vector<Metric>& metrics, const std::vector<Run>& runs) {
  for (const Metric& m : metrics) {
    const bool anywhere = std::any_of(runs.begin(), runs.end(), [&](const Run& r) {
      return sweep::lookup(r.summary, m.path) != nullptr;
    });
    if (anywhere || runs.empty()) continue;
    std::vector<std::string> known;
    for (const auto& [path, value] : sweep::numeric_leaves(runs.front().summary))
      known.push_back(path);
    std::fprintf(stderr, "warning: --metric %s: in no summary.json%s\n", m.path.c_str(),
                 did_you_mean(m.path, known).c_str());
  }
}

}  // namespace

int compare(const CompareOptions& options) {
  std::vector<Metric> metrics;
  for (const std::string& t : options.metrics.empty() ? kDefaultMetrics : options.metrics) {
    metrics.push_back(parse_metric(t));
  }
  const std::vector<Run> runs = load_runs(options.dirs);
  const std::vector<int> base = baselines(runs, options.baseline);
  warn_about_unknown_metrics(metrics, runs);

  std::printf("| run | transport |");
  for (const Metric& m : metrics) std::printf(" %s |", m.label.c_str());
  std::printf("\n|---|---|");
  for (std::size_t i = 0; i < metrics.size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    std::printf("| %s | %s |", runs[i].dir.c_str(), runs[i].transport.c_str());
    for (const Metric& m : metrics) {
      const nlohmann::ordered_json* v = sweep::lookup(runs[i].summary, m.path);
      const nlohmann::ordered_json* b =
          base[i] < 0 ? nullptr : sweep::lookup(runs[base[i]].summary, m.path);
      std::printf(" %s%s |", cell(v, m).c_str(), ratio(v, b).c_str());
    }
    std::printf("\n");
  }
  if (!options.baseline.empty()) {
    std::printf("\nIn parentheses: the ratio to the baseline (%s).\n", options.baseline.c_str());
  }
  return 0;
}

}  // namespace safs::cli
