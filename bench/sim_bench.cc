// Whole-simulator benchmarks (Release build): wall time, events per second,
// packet-hops per second and peak memory for fixed workloads. One case per
// process so that peak memory belongs to that case alone:
//   build/bin/sim_bench incast [TRANSPORT]
//       16-to-1 incast of 4 MiB flows, one switch
//   build/bin/sim_bench fattree [K [TRANSPORT]]
//       k = K fat tree (default 16: 1024 hosts), random permutation of 2 MB flows
// TRANSPORT is a registered transport name (default dctcp).
#include <sys/resource.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <string>

#include "engine/rng.h"
#include "experiment/experiment.h"
#include "metrics/summary.h"
#include "transport/registry.h"
#include "workload/flow_schedule.h"

namespace {

using namespace safs;

ExperimentConfig incast_config() {
  ExperimentConfig config;
  config.topology.kind = TopologyKind::kStar;
  config.topology.hosts = 17;
  config.mtu_bytes = 1500;
  config.network.switches.ecn_threshold_bytes = 65ull * (1500 + 78);
  config.network.switches.port_buffer_bytes = 1000ull * (1500 + 78);
  for (std::uint32_t s = 1; s <= 16; ++s) {
    config.workloads.find_or_add<ListedFlows>().flows.push_back(
        {s - 1, static_cast<int>(s), 0, 4ull << 20});
  }
  return config;
}

// Every host sends 2 MB to another host of a random permutation with no
// fixed points (Sattolo's algorithm: one cycle through all hosts).
ExperimentConfig fattree_config(int k) {
  ExperimentConfig config;
  config.topology.kind = TopologyKind::kFatTree;
  config.topology.fat_tree_k = k;
  config.mtu_bytes = 1500;
  const int hosts = config.topology.num_hosts();
  std::vector<int> dst(hosts);
  std::iota(dst.begin(), dst.end(), 0);
  Rng rng(1, "bench-permutation");
  for (int i = hosts - 1; i > 0; --i) std::swap(dst[i], dst[rng.below(i)]);
  for (int h = 0; h < hosts; ++h) {
    config.workloads.find_or_add<ListedFlows>().flows.push_back(
        {static_cast<std::uint32_t>(h), h, dst[h], 2'000'000});
  }
  return config;
}

int usage(const char* argv0, const std::string& problem) {
  std::fprintf(stderr, "sim_bench: %s\nusage: %s incast [TRANSPORT] | fattree [K [TRANSPORT]]\n",
               problem.c_str(), argv0);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  ExperimentConfig config;
  int transport_arg = 2;
  if (which == "incast" && argc <= 3) {
    config = incast_config();
  } else if (which == "fattree" && argc <= 4) {
    int k = 16;
    if (argc > 2) {
      char* end = nullptr;
      const long value = std::strtol(argv[2], &end, 10);
      if (*end != '\0' || value < 2 || value > 64 || value % 2 != 0) {
        return usage(argv[0], std::string("K '") + argv[2] + "': expected an even number 2..64");
      }
      k = static_cast<int>(value);
    }
    config = fattree_config(k);
    transport_arg = 3;
  } else {
    return usage(argv[0], which.empty() ? "no case given" : "bad arguments");
  }
  if (argc > transport_arg) {
    config.transport = argv[transport_arg];
    if (find_transport(config.transport) == nullptr) {
      return usage(argv[0], "transport '" + config.transport + "' is not registered");
    }
  }
  Experiment experiment(config);
  const double wall_s = experiment.run();
  const FlowSummary flows = summarize(experiment.recorder().records(), experiment.sim().now());
  const auto events = static_cast<double>(experiment.sim().events_processed());
  const auto hops = static_cast<double>(experiment.network_totals().packet_hops);
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "%s %s: %zu/%zu flows, simulated %.3f ms, wall %.3f s, %.2f M events, %.2f M events/s, "
      "%.2f M packet-hops/s, peak RSS %.1f MiB\n",
      which.c_str(), config.transport.c_str(), flows.completed, flows.flows,
      ps_to_sec(experiment.sim().now()) * 1e3, wall_s, events / 1e6, events / wall_s / 1e6,
      hops / wall_s / 1e6, static_cast<double>(usage.ru_maxrss) / 1024.0);
  std::printf("  packet pool: %zu packets allocated (peak live), %zu pending events at end\n",
              experiment.pool().capacity(), experiment.sim().pending_events());
  return flows.completed == flows.flows ? 0 : 1;
}
