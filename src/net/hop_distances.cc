#include "net/hop_distances.h"

#include <algorithm>
#include <tuple>

namespace safs {

namespace {

void sort_unique(std::vector<int>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

}  // namespace

HopDistances::HopDistances(const std::vector<std::vector<int>>& adjacency, int num_hosts)
    : adjacency_(adjacency), num_hosts_(num_hosts), table_of_host_(num_hosts, -1) {}

void HopDistances::invalidate() {
  if (class_of_switch_.empty() && tables_.empty()) return;
  class_of_switch_.clear();
  class_neighbors_.clear();
  links_begin_.clear();
  links_of_switch_.clear();
  tables_.clear();
  table_of_sources_.clear();
  std::fill(table_of_host_.begin(), table_of_host_.end(), -1);
  ++stats_.invalidations;
}

// Twins have the same set of switch neighbours. A neighbour's twin is a
// neighbour too (links are duplex), so each class links to whole classes.
void HopDistances::group_twins() {
  const std::size_t switches = adjacency_.size() - static_cast<std::size_t>(num_hosts_);
  std::map<std::vector<int>, int> class_of_neighbors;
  class_of_switch_.assign(switches, -1);
  for (std::size_t s = 0; s < switches; ++s) {
    std::vector<int> neighbors;
    for (const int node : adjacency_[static_cast<std::size_t>(num_hosts_) + s]) {
      if (node >= num_hosts_) neighbors.push_back(node);
    }
    sort_unique(neighbors);
    const auto next_class = static_cast<int>(class_of_neighbors.size());
    class_of_switch_[s] =
        class_of_neighbors.try_emplace(std::move(neighbors), next_class).first->second;
  }
  class_neighbors_.assign(class_of_neighbors.size(), {});
  for (const auto& [neighbors, c] : class_of_neighbors) {
    std::vector<int>& linked = class_neighbors_[static_cast<std::size_t>(c)];
    for (const int node : neighbors) {
      linked.push_back(class_of_switch_[static_cast<std::size_t>(node - num_hosts_)]);
    }
    sort_unique(linked);
  }
  links_begin_.assign(switches + 1, 0);
  for (std::size_t s = 0; s < switches; ++s) {
    const std::vector<int>& far_ends = adjacency_[static_cast<std::size_t>(num_hosts_) + s];
    links_begin_[s] = links_of_switch_.size();
    for (std::size_t link = 0; link < far_ends.size(); ++link) {
      links_of_switch_.push_back(
          {group_of(far_ends[link]), far_ends[link], static_cast<std::uint32_t>(link)});
    }
    std::sort(links_of_switch_.begin() + static_cast<std::ptrdiff_t>(links_begin_[s]),
              links_of_switch_.end(), [](const LinkEntry& a, const LinkEntry& b) {
                return std::tie(a.group, a.far_end, a.link) < std::tie(b.group, b.far_end, b.link);
              });
  }
  links_begin_[switches] = links_of_switch_.size();
  ++stats_.twin_groupings;
}

int HopDistances::group_of(int node) const {
  return node < num_hosts_ ? -1 - node
                           : class_of_switch_[static_cast<std::size_t>(node - num_hosts_)];
}

HopDistances::To HopDistances::to(int dst_host) {
  if (class_of_switch_.empty() && adjacency_.size() > static_cast<std::size_t>(num_hosts_)) {
    group_twins();
  }
  int& index = table_of_host_[static_cast<std::size_t>(dst_host)];
  if (index < 0) {
    std::vector<int> sources;  // the classes of the switches dst_host is linked to
    for (const int node : adjacency_[static_cast<std::size_t>(dst_host)]) {
      if (node >= num_hosts_) {
        sources.push_back(class_of_switch_[static_cast<std::size_t>(node - num_hosts_)]);
      }
    }
    sort_unique(sources);
    const auto [it, inserted] = table_of_sources_.try_emplace(std::move(sources), tables_.size());
    if (inserted) tables_.push_back(search_from(it->first));
    index = static_cast<int>(it->second);
  }
  return To(*this, dst_host, tables_[static_cast<std::size_t>(index)]);
}

// Breadth-first over twin classes from those holding a switch linked to the
// destination. Such a switch is 1 hop from it; each of its twins is not
// linked to it, so is one switch hop further than its nearest neighbour.
std::vector<std::uint16_t> HopDistances::search_from(const std::vector<int>& source_classes) {
  std::vector<std::uint16_t> switch_hops(class_neighbors_.size(), kUnreachable);
  std::vector<int> frontier;  // a FIFO: every class is appended once, read from `next`
  for (const int c : source_classes) {
    switch_hops[static_cast<std::size_t>(c)] = 0;
    frontier.push_back(c);
  }
  for (std::size_t next = 0; next < frontier.size(); ++next) {
    const int c = frontier[next];
    const std::uint16_t here = switch_hops[static_cast<std::size_t>(c)];
    for (const int linked : class_neighbors_[static_cast<std::size_t>(c)]) {
      std::uint16_t& there = switch_hops[static_cast<std::size_t>(linked)];
      if (there != kUnreachable) continue;
      there = HopDistances::plus(here, 1);
      frontier.push_back(linked);
    }
  }
  std::vector<std::uint16_t> hops(class_neighbors_.size());
  for (std::size_t c = 0; c < hops.size(); ++c) {
    if (switch_hops[c] != 0) {
      hops[c] = HopDistances::plus(switch_hops[c], 1);
      continue;
    }
    std::uint16_t nearest = kUnreachable;
    for (const int linked : class_neighbors_[c]) {
      nearest = std::min(nearest, switch_hops[static_cast<std::size_t>(linked)]);
    }
    hops[c] = HopDistances::plus(nearest, 2);
  }
  ++stats_.tables_built;
  stats_.classes_visited += frontier.size();
  return hops;
}

void HopDistances::To::add_links_to(const LinkEntry* first, const LinkEntry* last, int far_end,
                                    std::vector<std::size_t>& links) const {
  const int group = owner_.group_of(far_end);
  const auto [begin, end] = std::equal_range(
      first, last, LinkEntry{group, far_end, 0}, [](const LinkEntry& a, const LinkEntry& b) {
        return std::tie(a.group, a.far_end) < std::tie(b.group, b.far_end);
      });
  for (const LinkEntry* e = begin; e != end; ++e) links.push_back(e->link);
}

// The switches linked to the destination are 1 hop from it, every other
// switch of a class as far as the class says (switch_hops), and no host but
// the destination carries a route.
void HopDistances::To::closer_links(int switch_node, int hops,
                                    std::vector<std::size_t>& links) const {
  const auto s = static_cast<std::size_t>(switch_node - owner_.num_hosts_);
  const LinkEntry* first = owner_.links_of_switch_.data() + owner_.links_begin_[s];
  const LinkEntry* last = owner_.links_of_switch_.data() + owner_.links_begin_[s + 1];
  links.clear();
  const int wanted = hops - 1;
  if (wanted == 0) {
    add_links_to(first, last, dst_host_, links);
  } else if (wanted == 1) {
    for (const int node : owner_.adjacency_[static_cast<std::size_t>(dst_host_)]) {
      if (node >= owner_.num_hosts_) add_links_to(first, last, node, links);
    }
  } else {
    // Whole classes at a time. A class member linked to the destination (1
    // hop) is never among them: this switch, linked to its whole class,
    // would then be 2 hops away, and `wanted` at most 1.
    const LinkEntry* e =
        std::partition_point(first, last, [](const LinkEntry& l) { return l.group < 0; });
    while (e != last) {
      const int group = e->group;
      const LinkEntry* end =
          std::partition_point(e, last, [group](const LinkEntry& l) { return l.group == group; });
      if (class_hops_[static_cast<std::size_t>(group)] == wanted) {
        for (; e != end; ++e) links.push_back(e->link);
      }
      e = end;
    }
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
}

}  // namespace safs
