// What a topology holds, counted from its spec without building it: for
// estimating a run's memory before committing to it.
#pragma once

#include <cstdint>

#include "net/topology.h"

namespace safs {

struct TopologySize {
  std::uint64_t hosts = 0;
  std::uint64_t switches = 0;
  std::uint64_t links = 0;         // duplex links, two egress ports each
  std::uint64_t switch_ports = 0;  // egress ports on switches (the rest are host NICs)
  // Routing tables (hop_distances.h): one per class of twin switches that
  // hosts hang off, one entry per twin class.
  std::uint64_t routing_tables = 0;
  std::uint64_t twin_classes = 0;
  std::uint64_t max_switch_hops = 0;  // switches on the longest shortest path

  std::uint64_t ports() const { return 2 * links; }
};

TopologySize topology_size(const TopologySpec& spec);

}  // namespace safs
