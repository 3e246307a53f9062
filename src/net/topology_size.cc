#include "net/topology_size.h"

namespace safs {

// The counts follow the builders in topology.cc (a test checks them against
// built networks).
TopologySize topology_size(const TopologySpec& spec) {
  TopologySize size;
  size.hosts = static_cast<std::uint64_t>(spec.num_hosts());
  switch (spec.kind) {
    case TopologyKind::kStar:
      size.switches = 1;
      size.links = size.hosts;
      size.routing_tables = 1;
      size.twin_classes = 1;
      size.max_switch_hops = 1;
      break;
    case TopologyKind::kLeafSpine: {
      const auto leaves = static_cast<std::uint64_t>(spec.leaves);
      const auto spines = static_cast<std::uint64_t>(spec.spines);
      size.switches = leaves + spines;
      size.links = size.hosts + leaves * spines;
      size.routing_tables = 1;  // every leaf links to every spine: the leaves are twins
      size.twin_classes = 2;
      size.max_switch_hops = leaves > 1 ? 3 : 1;
      break;
    }
    case TopologyKind::kFatTree: {
      const auto k = static_cast<std::uint64_t>(spec.fat_tree_k);
      size.switches = 5 * k * k / 4;  // k^2/4 cores, k pods of k/2 aggregation and k/2 edge
      size.links = 3 * size.hosts;    // host-edge, edge-aggregation, aggregation-core: k^3/4 each
      // The edge switches of a pod are twins (they link to the same
      // aggregation switches), and so are the cores linked to the same
      // aggregation index; each aggregation switch is a class of its own.
      size.routing_tables = k;
      size.twin_classes = k + k * k / 2 + k / 2;
      size.max_switch_hops = 5;  // edge, aggregation, core, aggregation, edge
      break;
    }
  }
  size.switch_ports = size.ports() - size.hosts;  // every host has one link
  return size;
}

}  // namespace safs
