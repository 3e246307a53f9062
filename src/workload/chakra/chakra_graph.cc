#include "workload/chakra/chakra_graph.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <stdexcept>
#include <tuple>

#include "workload/csv_text.h"

namespace safs {

namespace {

// A duration beyond this (about 11.6 days) is a broken trace, and its
// picoseconds would overflow.
constexpr std::uint64_t kMaxDurationMicros = 1'000'000'000'000;

// Where an op comes from, for messages.
struct Origin {
  int rank = 0;
  const ChakraNode* node = nullptr;
};

// Trace names go into ops.csv labels: no commas, quotes or line breaks.
std::string label_text(const std::string& name) {
  std::string text = name;
  std::replace_if(text.begin(), text.end(), breaks_csv_field, '_');
  return text;
}

class Builder {
 public:
  Builder(const std::vector<ChakraRank>& ranks, const std::vector<int>& hosts)
      : ranks_(ranks), hosts_(hosts), collectives_(ranks.size()) {}

  ComputeGraph build() {
    for (int r = 0; r < rank_count(); ++r) {
      for (const ChakraNode* node : rank_order(r)) add_node(r, *node);
    }
    pair_sends();
    for (std::size_t k = 0; k < longest_collectives(); ++k) {
      expand_collective(k);
    }
    check_deadlock();
    return std::move(graph_);
  }

 private:
  struct CommEnd {
    int op = 0;
    int rank = 0;
    const ChakraNode* node = nullptr;
  };
  struct CollectiveOps {
    const ChakraNode* node = nullptr;
    std::vector<int> ops;  // step barriers: ops[s] sends step s, ops[s + 1] receives it
  };
  using Channel = std::tuple<int, int, std::int64_t>;  // source rank, destination rank, tag

  int rank_count() const { return static_cast<int>(ranks_.size()); }

  [[noreturn]] void fail(int r, const ChakraNode& node, const std::string& what) const {
    throw std::invalid_argument(ranks_[r].path + " (rank " + std::to_string(r) + "): node " +
                                std::to_string(node.id) + " '" + node.name + "' " + what);
  }

  // The rank's nodes in a topological order of their dependencies, ties by id.
  std::vector<const ChakraNode*> rank_order(int r) const {
    const std::vector<ChakraNode>& nodes = ranks_[r].nodes;
    std::map<std::uint64_t, std::size_t> index;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      if (!index.emplace(nodes[i].id, i).second) fail(r, nodes[i], "has the id of an earlier node");
    }
    std::vector<std::vector<std::size_t>> dependents(nodes.size());
    std::vector<std::set<std::size_t>> parents(nodes.size());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      for (const auto* deps : {&nodes[i].ctrl_deps, &nodes[i].data_deps}) {
        for (const std::uint64_t d : *deps) {
          const auto found = index.find(d);
          if (found == index.end()) {
            fail(r, nodes[i],
                 "depends on node " + std::to_string(d) + ", which is not in the file");
          }
          if (found->second == i) fail(r, nodes[i], "depends on itself");
          if (parents[i].insert(found->second).second) dependents[found->second].push_back(i);
        }
      }
    }
    std::vector<std::size_t> waiting(nodes.size());
    using Ready = std::pair<std::uint64_t, std::size_t>;  // id first: the smaller id runs first
    std::priority_queue<Ready, std::vector<Ready>, std::greater<>> ready;
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      waiting[i] = parents[i].size();
      if (waiting[i] == 0) ready.emplace(nodes[i].id, i);
    }
    std::vector<const ChakraNode*> order;
    while (!ready.empty()) {
      const std::size_t i = ready.top().second;
      ready.pop();
      order.push_back(&nodes[i]);
      for (const std::size_t d : dependents[i]) {
        if (--waiting[d] == 0) ready.emplace(nodes[d].id, d);
      }
    }
    if (order.size() < nodes.size()) report_cycle(r, waiting);
    return order;
  }

  // Some nodes never became ready: walk from one to a parent that did not
  // either until a node repeats; that node is on a cycle.
  [[noreturn]] void report_cycle(int r, const std::vector<std::size_t>& waiting) const {
    const std::vector<ChakraNode>& nodes = ranks_[r].nodes;
    std::map<std::uint64_t, std::size_t> index;
    for (std::size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i].id, i);
    std::size_t at = 0;
    while (waiting[at] == 0) ++at;
    std::vector<std::size_t> path;
    std::vector<int> seen_at(nodes.size(), -1);
    while (seen_at[at] < 0) {
      seen_at[at] = static_cast<int>(path.size());
      path.push_back(at);
      for (const auto* deps : {&nodes[at].ctrl_deps, &nodes[at].data_deps}) {
        const auto blocked = std::find_if(
            deps->begin(), deps->end(), [&](std::uint64_t d) { return waiting[index.at(d)] > 0; });
        if (blocked != deps->end()) {
          at = index.at(*blocked);
          break;
        }
      }
    }
    // path[seen_at[at]..] is the cycle, each node depending on the next.
    std::string cycle;
    for (std::size_t i = seen_at[at]; i < path.size(); ++i) {
      cycle += std::to_string(nodes[path[i]].id) + " -> ";
    }
    fail(r, nodes[at], "is on a dependency cycle (" + cycle + std::to_string(nodes[at].id) + ")");
  }

  int add_op(int r, const ChakraNode& node, TimePs duration_ps, const std::string& suffix = "") {
    origins_.push_back({r, &node});
    return graph_.add_op(hosts_[r], duration_ps,
                         "r" + std::to_string(r) + " n" + std::to_string(node.id) + " " +
                             label_text(node.name) + suffix);
  }

  int peer_of(int r, const ChakraNode& node, const std::optional<std::int64_t>& peer,
              const char* key) const {
    if (!peer) fail(r, node, std::string("has no ") + key + " attribute");
    if (*peer < 0 || *peer >= rank_count()) {
      fail(r, node,
           std::string("has ") + key + " " + std::to_string(*peer) +
               ", outside the trace's ranks 0.." + std::to_string(rank_count() - 1));
    }
    if (*peer == r) fail(r, node, std::string("has ") + key + " " + std::to_string(r) + ", itself");
    return static_cast<int>(*peer);
  }

  void add_node(int r, const ChakraNode& node) {
    switch (static_cast<ChakraNodeType>(node.type)) {
      case ChakraNodeType::kMetadata:
      case ChakraNodeType::kMemLoad:
      case ChakraNodeType::kMemStore:
      case ChakraNodeType::kCompute:
        if (node.duration_micros > kMaxDurationMicros) {
          fail(r, node,
               "lasts " + std::to_string(node.duration_micros) +
                   " us, more than the 1e12 us a trace may take");
        }
        add_op(r, node, static_cast<TimePs>(node.duration_micros) * kPsPerUs);
        return;
      case ChakraNodeType::kSend: {
        const int dst = peer_of(r, node, node.comm_dst, "comm_dst");
        if (node.comm_size.value_or(0) <= 0) fail(r, node, "is a send without a comm_size > 0");
        sends_[{r, dst, node.comm_tag.value_or(0)}].push_back({add_op(r, node, 0), r, &node});
        return;
      }
      case ChakraNodeType::kRecv: {
        const int src = peer_of(r, node, node.comm_src, "comm_src");
        recvs_[{src, r, node.comm_tag.value_or(0)}].push_back({add_op(r, node, 0), r, &node});
        return;
      }
      case ChakraNodeType::kCollective:
        add_collective(r, node);
        return;
      case ChakraNodeType::kInvalid:
        fail(r, node, "is an INVALID_NODE");
    }
    fail(r, node,
         "has node type " + std::to_string(node.type) +
             ", which the Chakra schema does not define (1..7)");
  }

  void add_collective(int r, const ChakraNode& node) {
    if (!node.comm_type) fail(r, node, "is a collective without a comm_type attribute");
    if (node.comm_size.value_or(0) < 0) fail(r, node, "has a negative comm_size");
    CollectiveSteps steps;
    try {
      steps =
          collective_steps(static_cast<ChakraCollective>(*node.comm_type),
                           static_cast<std::uint64_t>(node.comm_size.value_or(0)), rank_count());
    } catch (const std::invalid_argument& e) {
      fail(r, node, e.what());
    }
    CollectiveOps c{&node, {add_op(r, node, 0, steps.steps ? " [step 0]" : "")}};
    for (int s = 1; s <= steps.steps; ++s) {
      c.ops.push_back(add_op(r, node, 0, " [step " + std::to_string(s) + "]"));
    }
    collectives_[r].push_back(std::move(c));
  }

  // Pairs the k-th send of each channel with its k-th recv.
  void pair_sends() {
    for (const auto& [channel, sent] : sends_) {
      const auto found = recvs_.find(channel);
      const std::size_t received = found == recvs_.end() ? 0 : found->second.size();
      if (received < sent.size()) {
        const CommEnd& lone = sent[received];
        fail(lone.rank, *lone.node,
             "sends to rank " + std::to_string(std::get<1>(channel)) + " with tag " +
                 std::to_string(std::get<2>(channel)) +
                 ", and that rank has no recv left for it (" + std::to_string(sent.size()) +
                 " sends on this channel, " + std::to_string(received) + " recvs)");
      }
      for (std::size_t i = 0; i < sent.size(); ++i) {
        const CommEnd& recv = found->second[i];
        const std::int64_t bytes = *sent[i].node->comm_size;
        if (recv.node->comm_size && *recv.node->comm_size != bytes) {
          fail(recv.rank, *recv.node,
               "receives " + std::to_string(*recv.node->comm_size) + " bytes, and its send (node " +
                   std::to_string(sent[i].node->id) + " on rank " + std::to_string(sent[i].rank) +
                   ") sends " + std::to_string(bytes));
        }
        graph_.add_transfer(sent[i].op, recv.op, static_cast<std::uint64_t>(bytes));
      }
    }
    for (const auto& [channel, received] : recvs_) {
      const auto found = sends_.find(channel);
      const std::size_t sent = found == sends_.end() ? 0 : found->second.size();
      if (sent < received.size()) {
        const CommEnd& lone = received[sent];
        fail(lone.rank, *lone.node,
             "receives from rank " + std::to_string(std::get<0>(channel)) + " with tag " +
                 std::to_string(std::get<2>(channel)) + ", and that rank has no send for it");
      }
    }
  }

  std::size_t longest_collectives() const {
    std::size_t most = 0;
    for (const auto& c : collectives_) most = std::max(most, c.size());
    return most;
  }

  std::string describe(const ChakraNode& node) const {
    return std::string(collective_name(static_cast<ChakraCollective>(*node.comm_type))) + " of " +
           std::to_string(node.comm_size.value_or(0)) + " bytes";
  }

  // The k-th collective of every rank, as one collective over all ranks.
  void expand_collective(std::size_t k) {
    const int n = rank_count();
    for (int r = 0; r < n; ++r) {
      if (collectives_[r].size() > k) continue;
      int q = 0;
      while (collectives_[q].size() <= k) ++q;
      fail(q, *collectives_[q][k].node,
           "is collective " + std::to_string(k + 1) + " of its rank, and rank " +
               std::to_string(r) + " has only " + std::to_string(collectives_[r].size()) +
               " (every rank takes part in every collective, in order)");
    }
    const ChakraNode& first = *collectives_[0][k].node;
    for (int r = 1; r < n; ++r) {
      const ChakraNode& node = *collectives_[r][k].node;
      if (node.comm_type != first.comm_type ||
          node.comm_size.value_or(0) != first.comm_size.value_or(0)) {
        fail(r, node,
             "is collective " + std::to_string(k + 1) + " of its rank (" + describe(node) +
                 "), and rank 0's (node " + std::to_string(first.id) + ") is " + describe(first) +
                 " (the k-th collective of every rank must agree)");
      }
    }
    const CollectiveSteps steps =
        collective_steps(static_cast<ChakraCollective>(*first.comm_type),
                         static_cast<std::uint64_t>(first.comm_size.value_or(0)), n);
    for (int s = 0; s < steps.steps; ++s) {
      for (int r = 0; r < n; ++r) {
        for (int p = 1; p <= steps.peers; ++p) {
          const int to = (r + p) % n;
          graph_.add_transfer(collectives_[r][k].ops[s], collectives_[to][k].ops[s + 1],
                              steps.chunk_bytes);
        }
      }
    }
  }

  // planned_starts() refuses orders that deadlock without saying where; this
  // runs the same fixpoint and names the node each stuck rank stops at.
  void check_deadlock() const {
    std::vector<char> done(graph_.ops.size(), 0);
    std::vector<std::size_t> next(graph_.gpu_order.size(), 0);
    for (bool progressed = true; progressed;) {
      progressed = false;
      for (std::size_t g = 0; g < graph_.gpu_order.size(); ++g) {
        const std::vector<int>& order = graph_.gpu_order[g];
        while (next[g] < order.size() &&
               std::all_of(graph_.ops[order[next[g]]].inputs.begin(),
                           graph_.ops[order[next[g]]].inputs.end(),
                           [&](int t) { return done[graph_.transfers[t].producer] != 0; })) {
          done[order[next[g]++]] = 1;
          progressed = true;
        }
      }
    }
    std::string stuck;
    const Origin* first = nullptr;
    for (std::size_t g = 0; g < graph_.gpu_order.size(); ++g) {
      if (next[g] == graph_.gpu_order[g].size()) continue;
      const Origin& o = origins_[graph_.gpu_order[g][next[g]]];
      if (!first) {
        first = &o;
      } else {
        stuck += "; rank " + std::to_string(o.rank) + " is stuck too, at node " +
                 std::to_string(o.node->id);
      }
    }
    if (first) {
      fail(first->rank, *first->node,
           "waits for a transfer that is never sent: the ranks' orders deadlock (each rank runs "
           "its nodes in dependency order, ties by id" +
               stuck + ")");
    }
  }

  const std::vector<ChakraRank>& ranks_;
  const std::vector<int>& hosts_;
  ComputeGraph graph_;
  std::vector<Origin> origins_;  // per op
  std::map<Channel, std::vector<CommEnd>> sends_, recvs_;
  std::vector<std::vector<CollectiveOps>> collectives_;  // per rank, in its order
};

}  // namespace

const char* collective_name(ChakraCollective type) {
  switch (type) {
    case ChakraCollective::kAllReduce:
      return "all-reduce";
    case ChakraCollective::kReduce:
      return "reduce";
    case ChakraCollective::kAllGather:
      return "all-gather";
    case ChakraCollective::kGather:
      return "gather";
    case ChakraCollective::kScatter:
      return "scatter";
    case ChakraCollective::kBroadcast:
      return "broadcast";
    case ChakraCollective::kAllToAll:
      return "all-to-all";
    case ChakraCollective::kReduceScatter:
      return "reduce-scatter";
    case ChakraCollective::kReduceScatterBlock:
      return "reduce-scatter-block";
    case ChakraCollective::kBarrier:
      return "barrier";
  }
  return "unknown collective";
}

CollectiveSteps collective_steps(ChakraCollective type, std::uint64_t bytes, int ranks) {
  CollectiveSteps s;
  const int n = ranks;
  s.chunk_bytes = (bytes + static_cast<std::uint64_t>(n) - 1) / static_cast<std::uint64_t>(n);
  switch (type) {
    case ChakraCollective::kAllReduce:
      s.steps = 2 * (n - 1);
      break;  // reduce-scatter + all-gather
    case ChakraCollective::kAllGather:
    case ChakraCollective::kReduceScatter:
      s.steps = n - 1;
      break;
    case ChakraCollective::kAllToAll:
      s.steps = 1;
      s.peers = n - 1;
      break;
    default:
      throw std::invalid_argument(
          "has comm_type " + std::to_string(static_cast<int>(type)) + " (" + collective_name(type) +
          "); only all-reduce (0), all-gather (2), all-to-all (6) and reduce-scatter (7) are "
          "expanded");
  }
  if (n == 1 || bytes == 0) s.steps = 0;
  return s;
}

ComputeGraph chakra_graph(const std::vector<ChakraRank>& ranks,
                          const std::vector<int>& rank_hosts) {
  if (ranks.empty()) throw std::invalid_argument("a Chakra trace needs at least one rank");
  return Builder(ranks, rank_hosts).build();
}

}  // namespace safs
