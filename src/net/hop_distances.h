// Hop counts to a destination host, for shortest-path routing.
//
// Hosts carry no transit traffic, so distances are searched across switches
// only, and two kinds of sharing keep route set-up linear in the network:
// - switches with the same switch neighbours ("twins": the edge switches of
//   one fat-tree pod, all leaves of a leaf-spine) are equally far from any
//   switch that is not one of them, so the search runs on one node per twin
//   class;
// - a host's distances follow from the switches it is linked to, so hosts
//   hanging off one twin class share one table.
// A fat tree of k pods then needs k searches over O(k^2) classes, instead of
// one search over every node per destination host.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <vector>

namespace safs {

// The work done, so that tests can tell linear set-up from quadratic.
struct HopDistanceStats {
  std::uint64_t twin_groupings = 0;   // times the switches were grouped into twin classes
  std::uint64_t tables_built = 0;     // breadth-first searches run
  std::uint64_t classes_visited = 0;  // table entries those searches filled
  std::uint64_t invalidations = 0;    // times a graph change dropped cached tables
};

class HopDistances {
 public:
  static constexpr std::uint16_t kUnreachable = std::numeric_limits<std::uint16_t>::max();
  // A switch's link, as closer_links() looks it up.
  struct LinkEntry {
    int group;  // the far end's twin class, or -1 - far end for a host
    int far_end;
    std::uint32_t link;  // index into the switch's adjacency
  };
  // Memory per switch port, besides the tables (for estimates before building).
  static constexpr std::size_t kBytesPerSwitchPort = sizeof(LinkEntry);
  // `hops + more`, staying unreachable.
  static std::uint16_t plus(std::uint16_t hops, std::uint16_t more) {
    return hops >= kUnreachable - more ? kUnreachable : static_cast<std::uint16_t>(hops + more);
  }

  // Hops from any node to one destination host; valid until the next to()
  // or invalidate().
  class To {
   public:
    // `node` is the destination, a switch, or a host sending to the destination.
    std::uint16_t operator()(int node) const;
    // The links of `switch_node` (indices into its adjacency, ascending) to
    // the nodes one hop closer than its `hops`, in time independent of the
    // switch's radix: by twin class, not neighbour by neighbour.
    void closer_links(int switch_node, int hops, std::vector<std::size_t>& links) const;

   private:
    friend class HopDistances;
    To(const HopDistances& owner, int dst_host, const std::vector<std::uint16_t>& class_hops)
        : owner_(owner), dst_host_(dst_host), class_hops_(class_hops) {}
    std::uint16_t switch_hops(int node) const;
    void add_links_to(const LinkEntry* first, const LinkEntry* last, int far_end,
                      std::vector<std::size_t>& links) const;
    const HopDistances& owner_;
    int dst_host_;
    const std::vector<std::uint16_t>& class_hops_;  // for switches not linked to dst_host_
  };

  // `adjacency[node]` lists the node at the far end of each of its links;
  // nodes 0..num_hosts-1 are the hosts. Kept by reference: call invalidate()
  // whenever it changes.
  HopDistances(const std::vector<std::vector<int>>& adjacency, int num_hosts);

  void invalidate();  // O(1) while nothing is cached, as during building
  To to(int dst_host);
  const HopDistanceStats& stats() const { return stats_; }

 private:
  void group_twins();
  std::vector<std::uint16_t> search_from(const std::vector<int>& source_classes);

  int group_of(int node) const;  // a switch's twin class; -1 - node for a host

  const std::vector<std::vector<int>>& adjacency_;
  int num_hosts_;
  // Per switch, its links sorted by (group_of(far end), far end, link):
  // links_of_switch_[links_begin_[s] .. links_begin_[s + 1]).
  std::vector<std::size_t> links_begin_;
  std::vector<LinkEntry> links_of_switch_;
  std::vector<int> class_of_switch_;               // by node - num_hosts; empty until needed
  std::vector<std::vector<int>> class_neighbors_;  // per class, the classes linked to it
  std::vector<int> table_of_host_;                 // index into tables_, -1 until needed
  std::map<std::vector<int>, std::size_t> table_of_sources_;  // sorted class set -> table
  std::vector<std::vector<std::uint16_t>> tables_;  // per class, hops to the destination host
  HopDistanceStats stats_;
};

// Inline: route() asks for every neighbour of every node on a path.
inline std::uint16_t HopDistances::To::switch_hops(int node) const {
  for (const int linked : owner_.adjacency_[static_cast<std::size_t>(dst_host_)]) {
    if (linked == node) return 1;
  }
  const int c = owner_.class_of_switch_[static_cast<std::size_t>(node - owner_.num_hosts_)];
  return class_hops_[static_cast<std::size_t>(c)];
}

inline std::uint16_t HopDistances::To::operator()(int node) const {
  if (node == dst_host_) return 0;
  const int num_hosts = owner_.num_hosts_;
  if (node >= num_hosts) return switch_hops(node);
  // A sending host: one hop more than its nearest switch, or one if linked directly.
  std::uint16_t best = kUnreachable;
  for (const int neighbor : owner_.adjacency_[static_cast<std::size_t>(node)]) {
    if (neighbor == dst_host_) return 1;
    if (neighbor < num_hosts) continue;  // another host carries no transit traffic
    best = std::min(best, plus(switch_hops(neighbor), 1));
  }
  return best;
}

}  // namespace safs
