// The receiver-incast sweep: 2..12 urgent 64 MiB flows, deadlines scaled by
// 0.5..1.5, for one transport. For each point: is the urgent set EDF-feasible
// at 95% of the link, how many urgent flows missed, SAFS's largest lateness
// and EDF's at the full link rate (the lower bound), and background goodput.
//   build/bin/incast_sweep [TRANSPORT] [param=value ...]
#include <algorithm>
#include <cstdio>
#include <string>

#include "experiment/experiment.h"
#include "metrics/summary.h"
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

}  // namespace

int main(int argc, char** argv) {
  const std::string transport = argc > 1 ? argv[1] : "safs";
  std::printf(
      "| urgent | deadline scale | feasible at 95%% | misses | max lateness (ms) | EDF bound "
      "(ms) | ratio | background (Gbit/s) |\n|---:|---:|---|---:|---:|---:|---:|---:|\n");
  for (const int urgent : {2, 4, 8, 12}) {
    for (const double scale : {0.5, 0.75, 1.0, 1.25, 1.5}) {
      const IncastMicro m = make_incast_micro({urgent, 64ull << 20, scale});
      ExperimentConfig config;
      config.topology.hosts = m.hosts;
      config.transport = transport;
      config.workloads.add(ListedFlows{m.flows});
      config.workloads.add(BulkTraffic{m.bulk});
      for (int i = 2; i < argc; ++i) {
        const std::string kv = argv[i];
        const auto eq = kv.find('=');
        if (eq == std::string::npos) {
          std::fprintf(stderr, "expected param=value, got '%s'\n", kv.c_str());
          return 2;
        }
        config.transport_params[kv.substr(0, eq)] = std::stod(kv.substr(eq + 1));
      }
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
