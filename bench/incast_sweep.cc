// The receiver-incast sweep: 2..12 urgent 64 MiB flows, deadlines scaled by
// 0.5..1.5, for one transport. For each point: is the urgent set EDF-feasible
// at 95% of the link, how many urgent flows missed, SAFS's largest lateness
// and EDF's at the full link rate (the lower bound), and background goodput.
//   build/bin/incast_sweep [TRANSPORT] [param=value ...]
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <variant>

#include "experiment/experiment.h"
#include "metrics/summary.h"
#include "transport/registry.h"
#include "workload/bulk_chain.h"
#include "workload/flow_schedule.h"
#include "workload/incast_micro.h"

namespace {

using namespace safs;

// EDF on one link: the largest lateness of back-to-back service in deadline order.
double edf_max_lateness_s(const ExperimentConfig& c, double rate_bps) {
  double bits = 0, worst = -1e9;
  for (const FlowSpec& f : c.workloads.find<ListedFlows>()->flows) {  // in deadline order
    const std::uint64_t packets = (f.size_bytes + c.mtu_bytes - 1) / c.mtu_bytes;
    bits += 8.0 * static_cast<double>(f.size_bytes + packets * c.header_bytes);
    worst = std::max(worst, bits / rate_bps - ps_to_sec(f.deadline_ps));
  }
  return worst;
}

// A param's value as a scenario file would give it: true or false, an
// integer, or a number. Nothing else.
std::optional<Setting> parse_value(const std::string& text) {
  if (text == "true") return Setting(true);
  if (text == "false") return Setting(false);
  const char* end = text.data() + text.size();
  std::int64_t integer = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, integer); ec == std::errc() && p == end) {
    return Setting(integer);
  }
  double number = 0;
  if (auto [p, ec] = std::from_chars(text.data(), end, number); ec == std::errc() && p == end) {
    return Setting(number);
  }
  return std::nullopt;
}

// The param=value arguments, each checked against the transport's keys.
// Empty, with a message on stderr, when one is bad.
std::optional<Settings> read_params(const std::string& transport, int argc, char** argv) {
  const TransportInfo* info = find_transport(transport);
  if (info == nullptr) {
    std::fprintf(stderr, "incast_sweep: unknown transport '%s'\n", transport.c_str());
    return std::nullopt;
  }
  Settings params;
  for (int i = 2; i < argc; ++i) {
    const std::string kv = argv[i];
    const auto eq = kv.find('=');
    const std::string key = kv.substr(0, eq);
    if (eq == std::string::npos) {
      std::fprintf(stderr, "incast_sweep: expected param=value, got '%s'\n", kv.c_str());
      return std::nullopt;
    }
    const auto spec = std::find_if(info->keys.begin(), info->keys.end(),
                                   [&](const KeySpec& k) { return k.path == key; });
    if (spec == info->keys.end()) {
      std::fprintf(stderr, "incast_sweep: %s: %s has no such key (safs-sim reference lists them)\n",
                   kv.c_str(), transport.c_str());
      return std::nullopt;
    }
    const std::optional<Setting> value = parse_value(kv.substr(eq + 1));
    if (!value) {
      std::fprintf(stderr, "incast_sweep: %s: expected true, false or a number after '='\n",
                   kv.c_str());
      return std::nullopt;
    }
    const double number = std::holds_alternative<double>(*value) ? std::get<double>(*value)
                          : std::holds_alternative<std::int64_t>(*value)
                              ? static_cast<double>(std::get<std::int64_t>(*value))
                              : 0.0;
    if (number < spec->min_value || number > spec->max_value) {
      std::fprintf(stderr, "incast_sweep: %s: expected %g .. %g\n", kv.c_str(), spec->min_value,
                   spec->max_value);
      return std::nullopt;
    }
    params[key] = *value;
  }
  return params;
}

int run(int argc, char** argv) {
  const std::string transport = argc > 1 ? argv[1] : "safs";
  const std::optional<Settings> params = read_params(transport, argc, argv);
  if (!params) return 2;
  std::printf(
      "| urgent | deadline scale | feasible at 95%% | misses | max lateness (ms) | EDF bound "
      "(ms) | ratio | background (Gbit/s) |\n|---:|---:|---|---:|---:|---:|---:|---:|\n");
  for (const int urgent : {2, 4, 8, 12}) {
    for (const double scale : {0.5, 0.75, 1.0, 1.25, 1.5}) {
      const IncastMicro m = make_incast_micro({urgent, 64ull << 20, scale});
      ExperimentConfig config;
      config.topology.hosts = m.hosts;
      config.transport = transport;
      config.transport_params = *params;
      config.workloads.add(ListedFlows{m.flows});
      config.workloads.add(BulkTraffic{m.bulk});
      Experiment e(config);
      e.run();
      const FlowClass urgent_class = FlowClass::kUrgent, background = FlowClass::kBackground;
      const FlowSummary u = summarize(e.recorder().records(), e.sim().now(), &urgent_class);
      const FlowSummary b = summarize(e.recorder().records(), e.sim().now(), &background);
      const double bound = edf_max_lateness_s(config, 100e9);
      const bool feasible = edf_max_lateness_s(config, 95e9) <= 0;
      std::printf("| %d | %.2f | %s | %zu | %.3f | %.3f | %s | %.1f |\n", urgent, scale,
                  feasible ? "yes" : "no", u.with_deadline - u.met_deadline, u.max_lateness_s * 1e3,
                  bound * 1e3,
                  bound > 0 ? std::to_string(u.max_lateness_s / bound).substr(0, 5).c_str() : "-",
                  b.delivered_gbps);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {  // a param out of range: the message names it
    std::fprintf(stderr, "incast_sweep: %s\n", e.what());
    return 2;
  }
}
