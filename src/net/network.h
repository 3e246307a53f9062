// The network graph: hosts (node ids 0..hosts-1), switches, and duplex links
// made of two egress ports. Routing is shortest-path with per-flow ECMP: the
// next hop among equal-cost choices is a hash of the flow key and the node.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/simulator.h"
#include "net/hop_distances.h"
#include "net/packet_pool.h"
#include "net/port.h"
#include "net/queue_discipline.h"
#include "net/route.h"

namespace safs {

struct SwitchConfig {
  std::uint64_t port_buffer_bytes = 1'000'000;  // per egress port
  std::uint64_t shared_buffer_bytes = 0;        // per switch; 0 = no shared pool
  std::uint64_t ecn_threshold_bytes = 100'000;  // DCTCP K
};

// Where a queue is being built, so a factory can choose its discipline.
struct QueueSite {
  bool at_host = false;  // a host NIC (unlimited buffer, no ECN) or a switch port
  const SwitchConfig* config = nullptr;
  SharedBuffer* shared = nullptr;  // the switch's pool, if any
};
using QueueFactory = std::function<std::unique_ptr<QueueDiscipline>(const QueueSite&)>;

// The default: strict priority, drop-tail, ECN at K (switch ports only).
std::unique_ptr<QueueDiscipline> make_strict_priority_queue(const QueueSite& site);

struct NetworkConfig {
  SwitchConfig switches;
  double link_loss_rate = 0;  // random loss injected on every link
  std::uint64_t seed = 1;
  QueueFactory queue_factory = make_strict_priority_queue;
};

class Network {
 public:
  Network(Simulator& sim, PacketPool& pool, int num_hosts, NetworkConfig config);
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  int add_switch(std::string name);
  // A duplex link between nodes a and b (two ports, one in each direction).
  void connect(int a, int b, const LinkSpec& link);

  int num_hosts() const { return num_hosts_; }
  int num_nodes() const { return static_cast<int>(nodes_.size()); }
  const std::string& node_name(int node) const { return nodes_[node].name; }

  // A host's NIC: the port of its first link.
  Port& nic(int host) { return *ports_[nodes_[host].ports.front()]; }
  // Packets for `host` are delivered to `receiver`; its NIC pulls from `source`.
  void attach_host(int host, PacketSink* receiver, PacketSource* source);

  // Shortest path from src to dst host; equal-cost choices by hash of flow_key.
  Route route(int src_host, int dst_host, std::uint64_t flow_key);
  // The routing caches' work so far (tests check that set-up stays linear).
  const HopDistanceStats& routing_stats() const { return hops_.stats(); }

  const std::vector<std::unique_ptr<Port>>& ports() const { return ports_; }
  bool port_at_host(std::size_t port_index) const { return port_owner_[port_index] < num_hosts_; }
  // The port's far end is a host (a switch's downlink to it).
  bool port_to_host(std::size_t port_index) const { return port_peer_[port_index] < num_hosts_; }
  // The node at the port's far end (a host index if port_to_host).
  int port_peer(std::size_t port_index) const { return port_peer_[port_index]; }
  // Folds queue statistics up to now on every port.
  void settle_stats();

 private:
  struct Node {
    std::string name;
    std::vector<int> ports;  // egress port indices
    std::unique_ptr<SharedBuffer> shared;
  };

  Simulator& sim_;
  PacketPool& pool_;
  int num_hosts_;
  NetworkConfig config_;
  std::vector<Node> nodes_;
  std::vector<std::vector<int>> neighbors_;  // per node, the far end of each of its ports
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<int> port_owner_;
  std::vector<int> port_peer_;
  std::vector<PacketSink*> receivers_;
  HopDistances hops_;  // filled lazily, by route()
  // route()'s working memory, kept: every flow asks for two or three routes.
  std::vector<std::size_t> route_choices_;
};

}  // namespace safs
