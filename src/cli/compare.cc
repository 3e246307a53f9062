#include "cli/compare.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace safs::cli {

namespace {

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
  if (std::getline(in, scale, ':')) m.scale = std::stod(scale);
  if (m.label.empty()) m.label = m.path;
  return m;
}

const nlohmann::json* lookup(const nlohmann::json& root, const std::string& path) {
  const nlohmann::json* node = &root;
  std::stringstream in(path);
  std::string part;
  while (std::getline(in, part, '.')) {
    if (!node->is_object() || !node->contains(part)) return nullptr;
    node = &(*node)[part];
  }
  return node;
}

}  // namespace

int compare(const std::vector<std::string>& dirs, const std::vector<std::string>& metric_texts) {
  std::vector<Metric> metrics;
  for (const std::string& t : metric_texts.empty() ? kDefaultMetrics : metric_texts) {
    metrics.push_back(parse_metric(t));
  }
  std::printf("| run | transport |");
  for (const Metric& m : metrics) std::printf(" %s |", m.label.c_str());
  std::printf("\n|---|---|");
  for (std::size_t i = 0; i < metrics.size(); ++i) std::printf("---:|");
  std::printf("\n");
  for (const std::string& dir : dirs) {
    const std::string path = dir + "/summary.json";
    std::ifstream in(path);
    if (!in) throw std::runtime_error(path + ": cannot open");
    nlohmann::json summary;
    try {
      in >> summary;
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(path + ": not valid JSON (" + e.what() + ")");
    }
    std::printf("| %s | %s |", dir.c_str(), summary.value("transport", "?").c_str());
    for (const Metric& m : metrics) {
      const nlohmann::json* v = lookup(summary, m.path);
      if (v == nullptr || !v->is_number()) {
        std::printf(" - |");
      } else if (v->is_number_integer() && m.scale == 1) {
        std::printf(" %lld |", static_cast<long long>(v->get<std::int64_t>()));
      } else {
        std::printf(" %.3f |", v->get<double>() * m.scale);
      }
    }
    std::printf("\n");
  }
  return 0;
}

}  // namespace safs::cli
