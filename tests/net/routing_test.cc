// Shortest-path routing with per-flow ECMP on the standard topologies.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/simulator.h"
#include "net/network.h"
#include "net/packet_pool.h"
#include "net/port.h"
#include "net/route.h"
#include "net/topology.h"

namespace safs {
namespace {

constexpr std::uint64_t kGbps = 1'000'000'000;

class CountingSink final : public PacketSink {
 public:
  CountingSink(Simulator& sim, PacketPool& pool) : sim_(sim), pool_(pool) {}
  void receive(Packet& packet) override {
    arrivals.push_back(sim_.now());
    pool_.release(&packet);
  }
  std::vector<TimePs> arrivals;

 private:
  Simulator& sim_;
  PacketPool& pool_;
};

struct Fabric {
  explicit Fabric(const TopologySpec& spec, NetworkConfig config = {}) {
    net = build_network(spec, sim, pool, std::move(config));
    for (int h = 0; h < net->num_hosts(); ++h) {
      sinks.push_back(std::make_unique<CountingSink>(sim, pool));
      net->attach_host(h, sinks.back().get(), nullptr);
    }
  }
  Simulator sim;
  PacketPool pool;
  std::unique_ptr<Network> net;
  std::vector<std::unique_ptr<CountingSink>> sinks;
};

TopologySpec fat_tree(int k) {
  TopologySpec spec;
  spec.kind = TopologyKind::kFatTree;
  spec.fat_tree_k = k;
  spec.host_link = {100 * kGbps, kPsPerUs};
  spec.fabric_link = {400 * kGbps, 500 * kPsPerNs};
  return spec;
}

TopologySpec leaf_spine(int leaves, int hosts_per_leaf, int spines) {
  TopologySpec spec;
  spec.kind = TopologyKind::kLeafSpine;
  spec.leaves = leaves;
  spec.hosts_per_leaf = hosts_per_leaf;
  spec.spines = spines;
  return spec;
}

// The node names along a route, from the port names "from->to"; checks that
// consecutive ports chain (each starts where the previous one ended).
std::vector<std::string> path_nodes(const Route& route) {
  std::vector<std::string> nodes;
  for (std::size_t i = 0; i < route.links(); ++i) {
    const auto* port = dynamic_cast<const Port*>(route.hops[i]);
    EXPECT_NE(port, nullptr) << "hop " << i << " is not a port";
    if (port == nullptr) return nodes;
    const std::string& name = port->name();
    const std::size_t arrow = name.find("->");
    EXPECT_NE(arrow, std::string::npos) << name;
    const std::string from = name.substr(0, arrow);
    const std::string to = name.substr(arrow + 2);
    if (nodes.empty()) {
      nodes.push_back(from);
    } else {
      EXPECT_EQ(nodes.back(), from) << "route does not chain at hop " << i;
    }
    nodes.push_back(to);
  }
  return nodes;
}

std::vector<std::string> port_names(const Route& route) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < route.links(); ++i) {
    names.push_back(dynamic_cast<const Port*>(route.hops[i])->name());
  }
  return names;
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// ---------------------------------------------------------------------------
// Fat-tree

TEST(FatTreeRoutingTest, SizeOfTheTopology) {
  Fabric f(fat_tree(4));
  EXPECT_EQ(f.net->num_hosts(), 16);
  // 4 cores + 4 pods * (2 agg + 2 edge) switches.
  EXPECT_EQ(f.net->num_nodes(), 16 + 4 + 16);
  // Links: 16 host-edge + 16 edge-agg + 16 agg-core; two ports each.
  EXPECT_EQ(f.net->ports().size(), 2u * 48u);
}

TEST(FatTreeRoutingTest, LinkCountsByLocality) {
  Fabric f(fat_tree(4));
  // Hosts 4p..4p+3 are in pod p; 2 hosts per edge switch.
  for (int src = 0; src < 16; ++src) {
    for (int dst = 0; dst < 16; ++dst) {
      if (src == dst) continue;
      const Route route = f.net->route(src, dst, static_cast<std::uint64_t>(src * 16 + dst));
      std::size_t expected = 6;
      if (src / 2 == dst / 2) {
        expected = 2;
      } else if (src / 4 == dst / 4) {
        expected = 4;
      }
      ASSERT_EQ(route.links(), expected) << src << " -> " << dst;
      ASSERT_EQ(route.hops.size(), expected + 1);
      ASSERT_EQ(route.rate_bps.size(), expected);
      EXPECT_EQ(route.hops.back(), f.sinks[dst].get()) << src << " -> " << dst;
      const std::vector<std::string> nodes = path_nodes(route);
      ASSERT_EQ(nodes.size(), expected + 1);
      EXPECT_EQ(nodes.front(), "host" + std::to_string(src));
      EXPECT_EQ(nodes.back(), "host" + std::to_string(dst));
      // No host in the middle of a path.
      for (std::size_t i = 1; i + 1 < nodes.size(); ++i) {
        EXPECT_FALSE(starts_with(nodes[i], "host")) << nodes[i];
      }
    }
  }
}

TEST(FatTreeRoutingTest, InterPodPathShape) {
  Fabric f(fat_tree(4));
  const Route route = f.net->route(0, 15, 77);
  const std::vector<std::string> nodes = path_nodes(route);
  ASSERT_EQ(nodes.size(), 7u);
  EXPECT_EQ(nodes[1], "edge0.0");
  EXPECT_TRUE(starts_with(nodes[2], "agg0.")) << nodes[2];
  EXPECT_TRUE(starts_with(nodes[3], "core")) << nodes[3];
  EXPECT_TRUE(starts_with(nodes[4], "agg3.")) << nodes[4];
  EXPECT_EQ(nodes[5], "edge3.1");
  // Core c hangs off aggregation switch c / 2 of every pod.
  const int core = std::stoi(nodes[3].substr(4));
  EXPECT_EQ(nodes[2], "agg0." + std::to_string(core / 2));
  EXPECT_EQ(nodes[4], "agg3." + std::to_string(core / 2));
  // Link rates and propagation follow the spec: host links at the ends.
  EXPECT_EQ(route.rate_bps, (RouteLinkRates{100 * kGbps, 400 * kGbps, 400 * kGbps, 400 * kGbps,
                                            400 * kGbps, 100 * kGbps}));
  EXPECT_EQ(route.propagation_ps, 2 * kPsPerUs + 4 * 500 * kPsPerNs);
  EXPECT_EQ(route.bottleneck_bps(), 100 * kGbps);
}

TEST(FatTreeRoutingTest, SameKeySameRoute) {
  Fabric f(fat_tree(4));
  Fabric g(fat_tree(4));  // an identical, separately built network
  for (std::uint64_t key = 0; key < 64; ++key) {
    const Route a = f.net->route(3, 12, key);
    const Route b = f.net->route(3, 12, key);
    EXPECT_EQ(a.hops, b.hops) << key;
    EXPECT_EQ(port_names(a), port_names(g.net->route(3, 12, key))) << key;
  }
}

// The run seed salts the ECMP hash: another seed, other path choices; the
// same seed, the same choices.
TEST(FatTreeRoutingTest, SeedSaltsEcmp) {
  NetworkConfig seed1;
  seed1.seed = 1;
  NetworkConfig seed2;
  seed2.seed = 2;
  Fabric a(fat_tree(4), seed1);
  Fabric b(fat_tree(4), seed1);
  Fabric c(fat_tree(4), seed2);
  int differ = 0;
  for (std::uint64_t key = 0; key < 64; ++key) {
    const std::vector<std::string> names = port_names(a.net->route(0, 15, key));
    EXPECT_EQ(names, port_names(b.net->route(0, 15, key))) << key;
    differ += names != port_names(c.net->route(0, 15, key)) ? 1 : 0;
  }
  // 4 equal-cost paths: about 3/4 of the keys should move.
  EXPECT_GE(differ, 30);
}

TEST(FatTreeRoutingTest, KeysSpreadOverEqualCostPaths) {
  Fabric f(fat_tree(4));
  std::map<std::string, int> per_core;
  std::set<std::vector<PacketSink*>> distinct_routes;
  for (std::uint64_t key = 0; key < 256; ++key) {
    const Route route = f.net->route(0, 15, key);
    ++per_core[path_nodes(route)[3]];
    distinct_routes.insert(std::vector<PacketSink*>(route.hops.begin(), route.hops.end()));
  }
  EXPECT_GE(per_core.size(), 3u);
  EXPECT_EQ(per_core.size(), 4u);         // (k/2)^2 cores, all reachable
  EXPECT_EQ(distinct_routes.size(), 4u);  // one path per core in a k=4 fat-tree
  for (const auto& [core, count] : per_core) EXPECT_GE(count, 32) << core;  // mean 64

  // Within a pod: two aggregation switches to choose from.
  std::set<std::string> aggs;
  for (std::uint64_t key = 0; key < 64; ++key) aggs.insert(path_nodes(f.net->route(0, 2, key))[2]);
  EXPECT_EQ(aggs, (std::set<std::string>{"agg0.0", "agg0.1"}));
}

TEST(FatTreeRoutingTest, LargerFatTree) {
  Fabric f(fat_tree(8));
  EXPECT_EQ(f.net->num_hosts(), 128);
  // Hosts per pod = 16, per edge = 4.
  EXPECT_EQ(f.net->route(0, 3, 1).links(), 2u);
  EXPECT_EQ(f.net->route(0, 4, 1).links(), 4u);
  EXPECT_EQ(f.net->route(0, 127, 1).links(), 6u);
  std::set<std::string> cores;
  for (std::uint64_t key = 0; key < 512; ++key)
    cores.insert(path_nodes(f.net->route(0, 127, key))[3]);
  EXPECT_GE(cores.size(), 12u);  // 16 cores; 512 keys should reach nearly all
}

// A packet across the fat-tree arrives exactly at the route's ideal latency.
TEST(FatTreeRoutingTest, PacketArrivesAtIdealLatency) {
  Fabric f(fat_tree(4));
  const Route route = f.net->route(0, 15, 5);
  Packet& p = *f.pool.acquire();
  p.route = &route;
  p.next_hop = 0;
  p.wire_bytes = 1500;
  forward(p);
  f.sim.run();
  const TimePs expected = 2 * 120'000 + 4 * 30'000 + 2 * kPsPerUs + 4 * 500 * kPsPerNs;
  EXPECT_EQ(route.packet_latency_ps(1500), expected);
  EXPECT_EQ(f.sinks[15]->arrivals, (std::vector<TimePs>{expected}));
  EXPECT_EQ(f.pool.live(), 0u);
}

// ---------------------------------------------------------------------------
// Leaf-spine and star

TEST(LeafSpineRoutingTest, LinkCountsAndSpread) {
  Fabric f(leaf_spine(4, 4, 4));
  EXPECT_EQ(f.net->num_hosts(), 16);
  EXPECT_EQ(f.net->route(0, 3, 1).links(), 2u);  // same leaf
  EXPECT_EQ(f.net->route(0, 4, 1).links(), 4u);  // different leaves
  EXPECT_EQ(f.net->route(15, 0, 1).links(), 4u);
  std::map<std::string, int> per_spine;
  for (std::uint64_t key = 0; key < 256; ++key) {
    const Route route = f.net->route(1, 13, key);
    ASSERT_EQ(route.links(), 4u);
    EXPECT_EQ(route.hops.back(), f.sinks[13].get());
    const std::vector<std::string> nodes = path_nodes(route);
    EXPECT_EQ(nodes[1], "leaf0");
    EXPECT_EQ(nodes[3], "leaf3");
    ++per_spine[nodes[2]];
  }
  EXPECT_GE(per_spine.size(), 3u);
  EXPECT_EQ(per_spine.size(), 4u);
  for (const auto& [spine, count] : per_spine) {
    EXPECT_TRUE(starts_with(spine, "spine")) << spine;
    EXPECT_GE(count, 32) << spine;
  }
}

TEST(LeafSpineRoutingTest, SameKeySameRoute) {
  Fabric f(leaf_spine(4, 4, 8));
  for (std::uint64_t key = 0; key < 100; ++key) {
    EXPECT_EQ(f.net->route(2, 9, key).hops, f.net->route(2, 9, key).hops);
  }
}

TEST(StarRoutingTest, TwoLinks) {
  TopologySpec spec;
  spec.kind = TopologyKind::kStar;
  spec.hosts = 8;
  Fabric f(spec);
  for (int dst = 1; dst < 8; ++dst) {
    const Route route = f.net->route(0, dst, 1);
    EXPECT_EQ(route.links(), 2u);
    EXPECT_EQ(route.hops.back(), f.sinks[dst].get());
    EXPECT_EQ(route.hops.front(), &f.net->nic(0));
    EXPECT_EQ(path_nodes(route),
              (std::vector<std::string>{"host0", "switch", "host" + std::to_string(dst)}));
  }
}

// ---------------------------------------------------------------------------
// Hand-built graphs

// Host 0 is dual-homed on switches A and B. The shortest path from A to B is
// through host 0 (2 links) but hosts never carry transit traffic, so
// host 2 -> host 1 takes the 3-link switch path A-X-Y-B.
TEST(GraphRoutingTest, HostsDoNotCarryTransitTraffic) {
  Simulator sim;
  PacketPool pool;
  Network net(sim, pool, 3, NetworkConfig{});
  const int a = net.add_switch("A");
  const int b = net.add_switch("B");
  const int x = net.add_switch("X");
  const int y = net.add_switch("Y");
  const LinkSpec link;
  net.connect(0, a, link);
  net.connect(0, b, link);
  net.connect(2, a, link);
  net.connect(1, b, link);
  net.connect(a, x, link);
  net.connect(x, y, link);
  net.connect(y, b, link);
  CountingSink sink(sim, pool);
  net.attach_host(1, &sink, nullptr);
  const Route route = net.route(2, 1, 0);
  EXPECT_EQ(path_nodes(route), (std::vector<std::string>{"host2", "A", "X", "Y", "B", "host1"}));
  EXPECT_EQ(route.hops.back(), &sink);
  // The dual-homed host itself still reaches host 1 directly through B.
  for (std::uint64_t key = 0; key < 16; ++key) {
    EXPECT_EQ(net.route(0, 1, key).links(), 2u);
  }
}

TEST(GraphRoutingTest, UnreachableThrows) {
  Simulator sim;
  PacketPool pool;
  Network net(sim, pool, 3, NetworkConfig{});
  const int sw = net.add_switch("sw");
  net.connect(0, sw, LinkSpec{});
  net.connect(1, sw, LinkSpec{});  // host 2 is not connected
  CountingSink sink(sim, pool);
  net.attach_host(0, &sink, nullptr);
  net.attach_host(1, &sink, nullptr);
  EXPECT_THROW(net.route(0, 2, 1), std::runtime_error);
  EXPECT_THROW(net.route(2, 0, 1), std::runtime_error);
  EXPECT_EQ(net.route(0, 1, 1).links(), 2u);
}

TEST(GraphRoutingTest, ParallelLinksAreEqualCost) {
  Simulator sim;
  PacketPool pool;
  Network net(sim, pool, 2, NetworkConfig{});
  const int s1 = net.add_switch("s1");
  const int s2 = net.add_switch("s2");
  net.connect(0, s1, LinkSpec{});
  net.connect(1, s2, LinkSpec{});
  for (int i = 0; i < 4; ++i) net.connect(s1, s2, LinkSpec{});  // a 4-link bundle
  CountingSink sink(sim, pool);
  net.attach_host(1, &sink, nullptr);
  std::set<PacketSink*> middle;
  for (std::uint64_t key = 0; key < 128; ++key) {
    const Route route = net.route(0, 1, key);
    ASSERT_EQ(route.links(), 3u);
    middle.insert(route.hops[1]);
  }
  EXPECT_EQ(middle.size(), 4u);
}

}  // namespace
}  // namespace safs
