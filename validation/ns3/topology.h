// The safs-sim topologies (src/net/topology.cc) in ns-3: point-to-point links
// at the scenario's rates and delay, a PortQueueDisc on every egress port
// (switch ports: the scenario's buffer and K; host NICs: unlimited, no
// marking, as safs-sim's host ports), a one-packet device queue under it,
// and global (shortest-path) routing. Ports are named as safs-sim names them
// ("switch->host0", "leaf0->spine0"), so a case can point at one.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "case_file.h"
#include "ns3/ipv4-address.h"
#include "ns3/node-container.h"
#include "port_queue_disc.h"

namespace safs_validation {

struct Fabric {
  ns3::NodeContainer hosts;
  ns3::NodeContainer switches;
  std::vector<ns3::Ipv4Address> host_address;            // by host index
  std::map<std::string, ns3::Ptr<PortQueueDisc>> ports;  // every egress port, by safs-sim name
};

Fabric build_fabric(const CaseSpec& spec);

}  // namespace safs_validation
