// Topology building and route set-up (Release build): wall time to build a
// network and to route a random permutation (one flow per host, both
// directions), and peak memory. One case per process, so that peak memory
// belongs to that case alone:
//   build/bin/topology_bench fattree K
//   build/bin/topology_bench leafspine LEAVES HOSTS_PER_LEAF SPINES
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "engine/rng.h"
#include "engine/simulator.h"
#include "net/network.h"
#include "net/topology.h"

namespace {

using namespace safs;
using Clock = std::chrono::steady_clock;

class NullSink final : public PacketSink {
 public:
  void receive(Packet&) override {}
};

// A whole number in [lowest, highest] (the scenario keys' ranges), else -1.
int whole_in(const char* text, int lowest, int highest) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  return end != text && *end == '\0' && value >= lowest && value <= highest
             ? static_cast<int>(value)
             : -1;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "";
  TopologySpec spec;
  bool valid = false;
  if (which == "fattree" && argc == 3) {
    spec.kind = TopologyKind::kFatTree;
    spec.fat_tree_k = whole_in(argv[2], 2, 128);
    valid = spec.fat_tree_k > 0 && spec.fat_tree_k % 2 == 0;
  } else if (which == "leafspine" && argc == 5) {
    spec.kind = TopologyKind::kLeafSpine;
    spec.leaves = whole_in(argv[2], 1, 4096);
    spec.hosts_per_leaf = whole_in(argv[3], 1, 65535);
    spec.spines = whole_in(argv[4], 1, 4096);
    valid = spec.leaves > 0 && spec.hosts_per_leaf > 0 && spec.spines > 0 &&
            static_cast<long>(spec.leaves) * spec.hosts_per_leaf <= 65535;
  }
  if (!valid) {
    std::fprintf(stderr,
                 "usage: %s fattree K | leafspine LEAVES HOSTS_PER_LEAF SPINES\n"
                 "  K: even, 2-128; LEAVES, SPINES: 1-4096; HOSTS_PER_LEAF: 1-65535; at most "
                 "65535 hosts (the scenario keys' ranges)\n",
                 argv[0]);
    return 2;
  }
  Simulator sim;
  PacketPool pool;
  const auto build_start = Clock::now();
  const std::unique_ptr<Network> net = build_network(spec, sim, pool, {});
  const double build_s = seconds_since(build_start);

  NullSink sink;
  const int hosts = net->num_hosts();
  for (int h = 0; h < hosts; ++h) net->attach_host(h, &sink, nullptr);
  // Sattolo's algorithm: one cycle through all hosts, no host sends to itself.
  std::vector<int> dst(static_cast<std::size_t>(hosts));
  std::iota(dst.begin(), dst.end(), 0);
  Rng rng(1, "topology-bench");
  for (int i = hosts - 1; i > 0; --i) {
    std::swap(dst[static_cast<std::size_t>(i)], dst[rng.below(static_cast<std::uint64_t>(i))]);
  }
  const auto route_start = Clock::now();
  std::size_t links = 0;
  for (int h = 0; h < hosts; ++h) {
    const int to = dst[static_cast<std::size_t>(h)];
    links += net->route(h, to, static_cast<std::uint64_t>(h)).links();
    links += net->route(to, h, static_cast<std::uint64_t>(h)).links();
  }
  const double route_s = seconds_since(route_start);

  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  std::printf(
      "%s: %d hosts, %d switches, %zu ports: build %.3f s; %d flows routed both ways (%.2f links "
      "per route, %llu distance tables) %.3f s; peak RSS %.1f MiB\n",
      which.c_str(), hosts, net->num_nodes() - hosts, net->ports().size(), build_s, hosts,
      static_cast<double>(links) / (2.0 * hosts),
      static_cast<unsigned long long>(net->routing_stats().tables_built), route_s,
      static_cast<double>(usage.ru_maxrss) / 1024.0);
  return 0;
}
