#include "net/network.h"

#include <deque>
#include <limits>
#include <stdexcept>

#include "engine/rng.h"
#include "net/priority_queue.h"

namespace safs {

namespace {
constexpr std::uint16_t kUnreachable = std::numeric_limits<std::uint16_t>::max();
}

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
    : sim_(sim), pool_(pool), num_hosts_(num_hosts), config_(std::move(config)) {
  nodes_.resize(num_hosts);
  for (int h = 0; h < num_hosts; ++h) nodes_[h].name = "host" + std::to_string(h);
  receivers_.assign(num_hosts, nullptr);
  hops_to_host_.resize(num_hosts);
}

int Network::add_switch(std::string name) {
  Node node;
  node.name = std::move(name);
  if (config_.switches.shared_buffer_bytes > 0) {
    node.shared = std::make_unique<SharedBuffer>();
    node.shared->capacity_bytes = config_.switches.shared_buffer_bytes;
  }
  nodes_.push_back(std::move(node));
  return num_nodes() - 1;
}

void Network::connect(int a, int b, const LinkSpec& link) {
  for (auto& dist : hops_to_host_) dist.clear();  // distances change with the graph
  for (const auto& [from, to] : {std::pair{a, b}, std::pair{b, a}}) {
    Node& node = nodes_[from];
    const QueueSite site{from < num_hosts_, &config_.switches, node.shared.get()};
    auto port = std::make_unique<Port>(sim_, pool_, node.name + "->" + nodes_[to].name, link,
                                       config_.queue_factory(site));
    if (config_.link_loss_rate > 0) {
      port->wire().set_loss(config_.link_loss_rate, config_.seed, ports_.size());
    }
    node.ports.push_back(static_cast<int>(ports_.size()));
    node.neighbors.push_back(to);
    ports_.push_back(std::move(port));
    port_owner_.push_back(from);
    port_peer_.push_back(to);
  }
}

void Network::attach_host(int host, PacketSink* receiver, PacketSource* source) {
  receivers_[host] = receiver;
  nic(host).set_source(source);
}

const std::vector<std::uint16_t>& Network::hops_to(int dst_host) {
  std::vector<std::uint16_t>& dist = hops_to_host_[dst_host];
  if (!dist.empty()) return dist;
  // BFS over reversed links; links are duplex, so neighbors work both ways.
  // Hosts other than the destination never carry transit traffic.
  dist.assign(nodes_.size(), kUnreachable);
  std::deque<int> frontier{dst_host};
  dist[dst_host] = 0;
  while (!frontier.empty()) {
    const int node = frontier.front();
    frontier.pop_front();
    if (node < num_hosts_ && node != dst_host) continue;
    for (const int next : nodes_[node].neighbors) {
      if (dist[next] != kUnreachable) continue;
      dist[next] = static_cast<std::uint16_t>(dist[node] + 1);
      frontier.push_back(next);
    }
  }
  return dist;
}

Route Network::route(int src_host, int dst_host, std::uint64_t flow_key) {
  const std::vector<std::uint16_t>& dist = hops_to(dst_host);
  if (dist[src_host] == kUnreachable) {
    throw std::runtime_error("no path from " + node_name(src_host) + " to " + node_name(dst_host));
  }
  // The run seed salts the hash, as switches salt theirs: another seed, other
  // collisions. The flow key keeps each flow's path independent of the others.
  const std::uint64_t ecmp_salt = mix_keys(flow_key, config_.seed);
  Route route;
  int node = src_host;
  std::vector<std::size_t> choices;  // link indices at `node` that lead one hop closer
  while (node != dst_host) {
    const Node& here = nodes_[node];
    choices.clear();
    for (std::size_t i = 0; i < here.neighbors.size(); ++i) {
      const int next = here.neighbors[i];
      const bool transit_host = next < num_hosts_ && next != dst_host;
      if (!transit_host && dist[next] + 1 == dist[node]) choices.push_back(i);
    }
    // BFS distances guarantee at least one choice on a reachable path.
    const std::size_t count = choices.size();
    const std::size_t link =
        choices[count == 1 ? 0 : mix_keys(ecmp_salt, static_cast<std::uint64_t>(node)) % count];
    Port& port = *ports_[here.ports[link]];
    route.hops.push_back(&port);
    route.rate_bps.push_back(port.link().rate_bps);
    route.propagation_ps += port.link().delay_ps;
    node = here.neighbors[link];
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
