// The cost of building a network and setting up its routes: no work per
// link that grows with the network, and one distance search per switch a
// destination hangs off, not one per destination host. Counted, not timed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <memory>
#include <stdexcept>
#include <vector>

#include "engine/rng.h"
#include "engine/simulator.h"
#include "net/network.h"
#include "net/packet_pool.h"
#include "net/topology.h"
#include "net/topology_size.h"

namespace safs {
namespace {

class NullSink final : public PacketSink {
 public:
  void receive(Packet&) override {}
};

struct Built {
  explicit Built(const TopologySpec& spec) : net(build_network(spec, sim, pool, {})) {
    for (int h = 0; h < net->num_hosts(); ++h) net->attach_host(h, &sink, nullptr);
  }
  Simulator sim;
  PacketPool pool;
  NullSink sink;
  std::unique_ptr<Network> net;
};

TopologySpec fat_tree(int k) {
  TopologySpec spec;
  spec.kind = TopologyKind::kFatTree;
  spec.fat_tree_k = k;
  return spec;
}

void route_every_pair(Network& net) {
  for (int src = 0; src < net.num_hosts(); ++src) {
    for (int dst = 0; dst < net.num_hosts(); ++dst) {
      net.route(src, dst, static_cast<std::uint64_t>(src) * 7919 + static_cast<std::uint64_t>(dst));
    }
  }
}

TEST(RoutingCostTest, BuildingSearchesNothingAndDropsNoCache) {
  Built b(fat_tree(8));
  EXPECT_EQ(b.net->routing_stats().tables_built, 0u);
  EXPECT_EQ(b.net->routing_stats().twin_groupings, 0u);
  EXPECT_EQ(b.net->routing_stats().classes_visited, 0u);
  EXPECT_EQ(b.net->routing_stats().invalidations, 0u);
}

// 128 hosts on 32 edge switches in 8 pods: one search per pod, over the
// pods' edge classes, the 32 aggregation switches and 4 classes of cores.
TEST(RoutingCostTest, FatTreeSearchesOncePerPod) {
  const int k = 8;
  Built b(fat_tree(k));
  route_every_pair(*b.net);
  const HopDistanceStats& stats = b.net->routing_stats();
  EXPECT_EQ(stats.twin_groupings, 1u);
  EXPECT_EQ(stats.tables_built, 8u);
  EXPECT_EQ(stats.classes_visited, 8u * (8 + 32 + 4));
  EXPECT_EQ(stats.invalidations, 0u);
}

// The leaves are twins, and so are the spines: one search over two classes.
TEST(RoutingCostTest, LeafSpineSearchesOnce) {
  TopologySpec spec;
  spec.kind = TopologyKind::kLeafSpine;
  spec.leaves = 6;
  spec.hosts_per_leaf = 10;
  spec.spines = 3;
  Built b(spec);
  route_every_pair(*b.net);
  EXPECT_EQ(b.net->routing_stats().tables_built, 1u);
  EXPECT_EQ(b.net->routing_stats().classes_visited, 2u);
}

// The counts the memory estimate relies on match what the builders build.
TEST(RoutingCostTest, TopologySizeMatchesTheBuiltNetwork) {
  TopologySpec star;
  star.hosts = 5;
  TopologySpec one_leaf;
  one_leaf.kind = TopologyKind::kLeafSpine;
  one_leaf.leaves = 1;
  one_leaf.hosts_per_leaf = 3;
  one_leaf.spines = 2;
  TopologySpec leaf_spine = one_leaf;
  leaf_spine.leaves = 4;
  for (const TopologySpec& spec : {star, one_leaf, leaf_spine, fat_tree(2), fat_tree(4)}) {
    Built b(spec);
    const TopologySize size = topology_size(spec);
    EXPECT_EQ(size.hosts, static_cast<std::uint64_t>(b.net->num_hosts()));
    EXPECT_EQ(size.hosts + size.switches, static_cast<std::uint64_t>(b.net->num_nodes()));
    EXPECT_EQ(size.ports(), b.net->ports().size());
    std::uint64_t switch_ports = 0;
    for (std::size_t p = 0; p < b.net->ports().size(); ++p) switch_ports += !b.net->port_at_host(p);
    EXPECT_EQ(size.switch_ports, switch_ports);
    std::uint64_t longest = 0;
    for (int dst = 0; dst < b.net->num_hosts(); ++dst) {
      longest = std::max<std::uint64_t>(longest, b.net->route(0, dst, 1).links());
    }
    route_every_pair(*b.net);
    EXPECT_EQ(size.routing_tables, b.net->routing_stats().tables_built);
    EXPECT_EQ(size.twin_classes * size.routing_tables, b.net->routing_stats().classes_visited);
    EXPECT_EQ(size.max_switch_hops + 1, longest);
  }
}

// A link added after routes were set up drops the cached distances once, and
// later routes use the new link.
TEST(RoutingCostTest, ALinkAddedLaterIsRoutedOver) {
  TopologySpec two_hosts;
  two_hosts.hosts = 2;
  Built b(two_hosts);
  EXPECT_EQ(b.net->route(0, 1, 1).links(), 2u);
  b.net->connect(0, 1, LinkSpec{});  // a direct cable
  EXPECT_EQ(b.net->routing_stats().invalidations, 1u);
  EXPECT_EQ(b.net->route(0, 1, 1).links(), 1u);
  b.net->connect(0, 1, LinkSpec{});  // nothing cached since: nothing to drop
  b.net->connect(0, 1, LinkSpec{});
  EXPECT_EQ(b.net->routing_stats().invalidations, 2u);
}

// Hosts cabled to each other only, then switches: the tables of the
// switchless network are dropped too.
TEST(RoutingCostTest, ASwitchAddedAfterRoutingIsRoutedOver) {
  Simulator sim;
  PacketPool pool;
  NullSink sink;
  Network net(sim, pool, 3, NetworkConfig{});
  net.connect(0, 1, LinkSpec{});
  net.connect(2, 1, LinkSpec{});
  for (int h = 0; h < 3; ++h) net.attach_host(h, &sink, nullptr);
  EXPECT_EQ(net.route(0, 1, 1).links(), 1u);
  EXPECT_THROW(net.route(0, 2, 1), std::runtime_error);  // host 1 carries no transit
  const int a = net.add_switch("A");
  const int b = net.add_switch("B");
  net.connect(0, a, LinkSpec{});
  net.connect(a, b, LinkSpec{});
  net.connect(2, b, LinkSpec{});
  EXPECT_EQ(net.route(0, 2, 1).links(), 3u);
  EXPECT_EQ(net.route(1, 0, 1).links(), 1u);
}

// The shared tables and the links grouped by class give every route the one
// a plain breadth-first search from its destination host would (hosts carry
// no transit traffic), on random graphs with multi-homed hosts, host-to-host
// and parallel links.
std::vector<int> reference_hops_to(const std::vector<std::vector<int>>& adjacency, int num_hosts,
                                   int dst) {
  std::vector<int> hops(adjacency.size(), -1);
  std::deque<int> frontier{dst};
  hops[static_cast<std::size_t>(dst)] = 0;
  while (!frontier.empty()) {
    const int node = frontier.front();
    frontier.pop_front();
    if (node < num_hosts && node != dst) continue;
    for (const int next : adjacency[static_cast<std::size_t>(node)]) {
      if (hops[static_cast<std::size_t>(next)] >= 0) continue;
      hops[static_cast<std::size_t>(next)] = hops[static_cast<std::size_t>(node)] + 1;
      frontier.push_back(next);
    }
  }
  return hops;
}

// The route by the definition: at every node, the links to a node one hop
// closer (never through another host), the flow's hash choosing among them.
std::vector<const PacketSink*> reference_route(const Network& net,
                                               const std::vector<std::vector<int>>& adjacency,
                                               const std::vector<std::vector<std::size_t>>& ports,
                                               const std::vector<int>& hops, int src, int dst,
                                               std::uint64_t key) {
  const std::uint64_t salt = mix_keys(key, NetworkConfig{}.seed);
  std::vector<const PacketSink*> route;
  for (int node = src; node != dst;) {
    const auto here = static_cast<std::size_t>(node);
    std::vector<std::size_t> choices;
    for (std::size_t i = 0; i < adjacency[here].size(); ++i) {
      const int next = adjacency[here][i];
      const bool transit_host = next < net.num_hosts() && next != dst;
      if (!transit_host && hops[static_cast<std::size_t>(next)] + 1 == hops[here]) {
        choices.push_back(i);
      }
    }
    const std::size_t pick =
        choices.size() == 1 ? 0 : mix_keys(salt, static_cast<std::uint64_t>(node)) % choices.size();
    route.push_back(net.ports()[ports[here][choices[pick]]].get());
    node = adjacency[here][choices[pick]];
  }
  return route;
}

// `twins` switches copy the switch links of a random other one, so that
// destinations hang off twin classes of which they use only some members.
void check_random_graph(std::uint64_t seed, int twins) {
  constexpr int kHosts = 24;
  constexpr int kSwitches = 12;
  Simulator sim;
  PacketPool pool;
  NullSink sink;
  Network net(sim, pool, kHosts, NetworkConfig{});
  const int switches = kSwitches + twins;
  for (int s = 0; s < switches; ++s) net.add_switch("s" + std::to_string(s));
  std::vector<std::vector<int>> adjacency(static_cast<std::size_t>(kHosts + switches));
  std::vector<std::vector<std::size_t>> ports(adjacency.size());  // per node, by link
  const auto link = [&](int a, int b) {
    if (a == b) return;
    ports[static_cast<std::size_t>(a)].push_back(net.ports().size());  // a->b comes first
    ports[static_cast<std::size_t>(b)].push_back(net.ports().size() + 1);
    net.connect(a, b, LinkSpec{});
    adjacency[static_cast<std::size_t>(a)].push_back(b);
    adjacency[static_cast<std::size_t>(b)].push_back(a);
  };
  Rng rng(seed, "routing-cost-test");
  const auto pick = [&](int n) {
    return static_cast<int>(rng.below(static_cast<std::uint64_t>(n)));
  };
  for (int s = 1; s < kSwitches; ++s) link(kHosts + s, kHosts + pick(s));
  for (int i = 0; i < 6; ++i) link(kHosts + pick(kSwitches), kHosts + pick(kSwitches));
  for (int i = 0; i < 3; ++i) {  // parallel links
    const int a = kHosts + pick(kSwitches);
    link(a, adjacency[static_cast<std::size_t>(a)].front());
  }
  for (int t = 0; t < twins; ++t) {
    const std::vector<int> original = adjacency[static_cast<std::size_t>(kHosts + pick(kSwitches))];
    for (const int node : original) link(kHosts + kSwitches + t, node);
  }
  for (int h = 0; h < kHosts; ++h) {
    link(h, kHosts + pick(switches));
    if (h % 3 == 0) link(h, kHosts + pick(switches));  // multi-homed
    if (h % 5 == 0) link(h, pick(kHosts));             // a direct host link
  }
  for (int h = 0; h < kHosts; ++h) net.attach_host(h, &sink, nullptr);
  for (int dst = 0; dst < kHosts; ++dst) {
    const std::vector<int> hops = reference_hops_to(adjacency, kHosts, dst);
    for (int src = 0; src < kHosts; ++src) {
      for (std::uint64_t key = 0; key < 4; ++key) {
        const Route route = net.route(src, dst, key);
        ASSERT_EQ(route.links(), static_cast<std::size_t>(hops[static_cast<std::size_t>(src)]))
            << "seed " << seed << ": " << src << " -> " << dst;
        EXPECT_EQ(std::vector<const PacketSink*>(route.hops.begin(), route.hops.end() - 1),
                  reference_route(net, adjacency, ports, hops, src, dst, key))
            << "seed " << seed << ": " << src << " -> " << dst << " key " << key;
      }
    }
  }
}

TEST(RoutingCostTest, RandomGraphRoutesAreShortest) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) check_random_graph(seed, 0);
}

TEST(RoutingCostTest, RandomGraphWithTwinsRoutesAreShortest) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) check_random_graph(seed, 6);
}

}  // namespace
}  // namespace safs
