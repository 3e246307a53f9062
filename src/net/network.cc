#include "net/network.h"

#include <stdexcept>

#include "engine/rng.h"
#include "net/priority_queue.h"

namespace safs {

std::unique_ptr<QueueDiscipline> make_strict_priority_queue(const QueueSite& site) {
  PriorityQueueConfig config;
  if (!site.at_host) {
    config.limits.port_bytes = site.config->port_buffer_bytes;
    config.limits.shared = site.shared;
    config.ecn_threshold_bytes = site.config->ecn_threshold_bytes;
  }
  return std::make_unique<StrictPriorityQueue>(config);
}

Network::Network(Simulator& sim, PacketPool& pool, int num_hosts, NetworkConfig config)
    : sim_(sim),
      pool_(pool),
      num_hosts_(num_hosts),
      config_(std::move(config)),
      hops_(neighbors_, num_hosts) {
  nodes_.resize(num_hosts);
  neighbors_.resize(num_hosts);
  for (int h = 0; h < num_hosts; ++h) nodes_[h].name = "host" + std::to_string(h);
  receivers_.assign(num_hosts, nullptr);
}

int Network::add_switch(std::string name) {
  Node node;
  node.name = std::move(name);
  if (config_.switches.shared_buffer_bytes > 0) {
    node.shared = std::make_unique<SharedBuffer>();
    node.shared->capacity_bytes = config_.switches.shared_buffer_bytes;
  }
  nodes_.push_back(std::move(node));
  neighbors_.emplace_back();
  hops_.invalidate();  // the tables hold one entry per switch
  return num_nodes() - 1;
}

void Network::connect(int a, int b, const LinkSpec& link) {
  hops_.invalidate();  // distances change with the graph
  for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    Node& node = nodes_[from];
    const QueueSite site{from < num_hosts_, &config_.switches, node.shared.get()};
    auto port = std::make_unique<Port>(sim_, pool_, node.name + "->" + nodes_[to].name, link,
                                       config_.queue_factory(site));
    if (config_.link_loss_rate > 0) {
      port->wire().set_loss(config_.link_loss_rate, config_.seed, ports_.size());
    }
    node.ports.push_back(static_cast<int>(ports_.size()));
    neighbors_[from].push_back(to);
    ports_.push_back(std::move(port));
    port_owner_.push_back(from);
    port_peer_.push_back(to);
  }
}

void Network::attach_host(int host, PacketSink* receiver, PacketSource* source) {
  receivers_[host] = receiver;
  nic(host).set_source(source);
}

Route Network::route(int src_host, int dst_host, std::uint64_t flow_key) {
  const HopDistances::To hops_to_dst = hops_.to(dst_host);
  int hops_left = hops_to_dst(src_host);
  if (hops_left == HopDistances::kUnreachable) {
    throw std::runtime_error("no path from " + node_name(src_host) + " to " + node_name(dst_host));
  }
  // The run seed salts the hash, as switches salt theirs: another seed, other
  // collisions. The flow key keeps each flow's path independent of the others.
  const std::uint64_t ecmp_salt = mix_keys(flow_key, config_.seed);
  Route route;
  int node = src_host;
  std::vector<std::size_t>& choices = route_choices_;  // link indices at `node` one hop closer
  while (node != dst_host) {
    const Node& here = nodes_[node];
    const std::vector<int>& neighbors = neighbors_[node];
    if (node >= num_hosts_) {
      hops_to_dst.closer_links(node, hops_left, choices);
    } else {
      choices.clear();
      for (std::size_t i = 0; i < neighbors.size(); ++i) {
        const int next = neighbors[i];
        const bool transit_host = next < num_hosts_ && next != dst_host;
        if (!transit_host && hops_to_dst(next) + 1 == hops_left) choices.push_back(i);
      }
    }
    // BFS distances guarantee at least one choice on a reachable path.
    const std::size_t count = choices.size();
    const std::size_t link =
        choices[count == 1 ? 0 : mix_keys(ecmp_salt, static_cast<std::uint64_t>(node)) % count];
    Port& port = *ports_[here.ports[link]];
    route.hops.push_back(&port);
    route.rate_bps.push_back(port.link().rate_bps);
    route.propagation_ps += port.link().delay_ps;
    node = neighbors[link];
    --hops_left;
  }
  if (receivers_[dst_host] == nullptr) {
    throw std::logic_error("route to " + node_name(dst_host) + " before a receiver was attached");
  }
  route.hops.push_back(receivers_[dst_host]);
  return route;
}

void Network::settle_stats() {
  for (auto& port : ports_) port->settle_stats();
}

}  // namespace safs
