#include "net/topology.h"

#include <string>

namespace safs {

int TopologySpec::num_hosts() const {
  switch (kind) {
    case TopologyKind::kStar:
      return hosts;
    case TopologyKind::kLeafSpine:
      return hosts_per_leaf * leaves;
    case TopologyKind::kFatTree:
      return fat_tree_k * fat_tree_k * fat_tree_k / 4;
  }
  return 0;
}

namespace {

void build_star(const TopologySpec& spec, Network& net) {
  const int sw = net.add_switch("switch");
  for (int h = 0; h < spec.hosts; ++h) net.connect(h, sw, spec.host_link);
}

void build_leaf_spine(const TopologySpec& spec, Network& net) {
  std::vector<int> spines;
  for (int s = 0; s < spec.spines; ++s)
    spines.push_back(net.add_switch("spine" + std::to_string(s)));
  for (int l = 0; l < spec.leaves; ++l) {
    const int leaf = net.add_switch("leaf" + std::to_string(l));
    for (int h = 0; h < spec.hosts_per_leaf; ++h) {
      net.connect(l * spec.hosts_per_leaf + h, leaf, spec.host_link);
    }
    for (const int spine : spines) net.connect(leaf, spine, spec.fabric_link);
  }
}

// Al-Fares et al. (SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation
// switches, (k/2)^2 cores; aggregation switch i of every pod links to cores
// i*k/2 .. i*k/2 + k/2 - 1.
void build_fat_tree(const TopologySpec& spec, Network& net) {
  const int k = spec.fat_tree_k;
  const int half = k / 2;
  std::vector<int> cores;
  for (int c = 0; c < half * half; ++c) cores.push_back(net.add_switch("core" + std::to_string(c)));
  int host = 0;
  for (int pod = 0; pod < k; ++pod) {
    std::vector<int> aggs;
    for (int a = 0; a < half; ++a) {
      const int agg = net.add_switch("agg" + std::to_string(pod) + "." + std::to_string(a));
      aggs.push_back(agg);
      for (int c = 0; c < half; ++c) net.connect(agg, cores[a * half + c], spec.fabric_link);
    }
    for (int e = 0; e < half; ++e) {
      const int edge = net.add_switch("edge" + std::to_string(pod) + "." + std::to_string(e));
      for (int h = 0; h < half; ++h) net.connect(host++, edge, spec.host_link);
      for (const int agg : aggs) net.connect(edge, agg, spec.fabric_link);
    }
  }
}

}  // namespace

std::unique_ptr<Network> build_network(const TopologySpec& spec, Simulator& sim, PacketPool& pool,
                                       NetworkConfig config) {
  auto net = std::make_unique<Network>(sim, pool, spec.num_hosts(), std::move(config));
  switch (spec.kind) {
    case TopologyKind::kStar:
      build_star(spec, *net);
      break;
    case TopologyKind::kLeafSpine:
      build_leaf_spine(spec, *net);
      break;
    case TopologyKind::kFatTree:
      build_fat_tree(spec, *net);
      break;
  }
  return net;
}

}  // namespace safs
