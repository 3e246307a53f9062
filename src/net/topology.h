// Builders for the standard datacenter topologies. Hosts are numbered first
// (0..hosts-1, in rack order), then switches.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "net/network.h"

namespace safs {

enum class TopologyKind { kStar, kLeafSpine, kFatTree };

struct TopologySpec {
  TopologyKind kind = TopologyKind::kStar;
  int hosts = 16;           // star: hosts on the one switch
  int hosts_per_leaf = 16;  // leaf-spine
  int leaves = 4;
  int spines = 4;
  int fat_tree_k = 4;    // fat-tree: k pods, k^3/4 hosts
  LinkSpec host_link;    // host <-> first switch
  LinkSpec fabric_link;  // switch <-> switch

  int num_hosts() const;
};

std::unique_ptr<Network> build_network(const TopologySpec& spec, Simulator& sim, PacketPool& pool,
                                       NetworkConfig config);

}  // namespace safs
