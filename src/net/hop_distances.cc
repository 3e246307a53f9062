#include "net/hop_distances.h"

#include <algorithm>

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
  if (class_of_switch_.empty()) return;
  class_of_switch_.clear();
  class_neighbors_.clear();
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
  ++stats_.twin_groupings;
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

}  // namespace safs
