// Chakra traces as compute graphs: per-rank dependency order, send/recv
// pairs as transfers with the plan's timestamps, collectives expanded into
// point-to-point steps, and every malformed trace refused naming the node.
// Traces are built in memory (no protobuf needed).
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

#include "workload/chakra/chakra_graph.h"
#include "workload/chakra/gpipe_trace.h"

namespace {

using namespace safs;

std::string error_of(const std::vector<ChakraRank>& ranks, std::vector<int> hosts = {}) {
  if (hosts.empty()) {
    for (std::size_t r = 0; r < ranks.size(); ++r) hosts.push_back(static_cast<int>(r));
  }
  try {
    chakra_graph(ranks, hosts);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

ChakraNode compute(std::uint64_t id, std::uint64_t us, std::vector<std::uint64_t> deps = {}) {
  ChakraNode n;
  n.id = id;
  n.name = "c" + std::to_string(id);
  n.type = static_cast<int>(ChakraNodeType::kCompute);
  n.duration_micros = us;
  n.data_deps = std::move(deps);
  return n;
}

ChakraNode comm(std::uint64_t id, ChakraNodeType type, int peer, std::int64_t bytes,
                std::vector<std::uint64_t> deps = {}) {
  ChakraNode n = compute(id, 0, std::move(deps));
  n.name = type == ChakraNodeType::kSend ? "send" : "recv";
  n.type = static_cast<int>(type);
  (type == ChakraNodeType::kSend ? n.comm_dst : n.comm_src) = peer;
  n.comm_size = bytes;
  return n;
}

ChakraNode collective(std::uint64_t id, ChakraCollective type, std::int64_t bytes) {
  ChakraNode n = compute(id, 0);
  n.name = "coll";
  n.type = static_cast<int>(ChakraNodeType::kCollective);
  n.comm_type = static_cast<std::int64_t>(type);
  n.comm_size = bytes;
  return n;
}

ChakraRank rank_of(const std::string& path, std::vector<ChakraNode> nodes) {
  return {path, "1.0.0", std::move(nodes)};
}

// Two stages, two microbatches, F = 10 us, B = 20 us: the schedule worked
// out by hand in docs/workloads.md's Chakra section.
TEST(ChakraGraph, GpipeSendsAndRecvsBecomeTransfersWithThePlannedStarts) {
  const std::vector<ChakraRank> ranks = gpipe_trace({.stages = 2,
                                                     .microbatches = 2,
                                                     .forward_us = 10,
                                                     .backward_us = 20,
                                                     .activation_bytes = 1000});
  const ComputeGraph g = chakra_graph(ranks, {3, 5});
  ASSERT_EQ(g.ops.size(), 16u);
  EXPECT_EQ(g.gpu_order[3].size(), 8u);
  EXPECT_EQ(g.gpu_order[5].size(), 8u);
  EXPECT_TRUE(g.gpu_order[0].empty());
  // Rank 0: F0 send F1 send recv B1 recv B0; rank 1: recv F0 recv F1 B1 send B0 send.
  EXPECT_EQ(g.ops[0].label, "r0 n1 forward mb0");
  EXPECT_EQ(g.ops[4].label, "r0 n5 recv_grad mb1");
  EXPECT_EQ(g.ops[13].label, "r1 n6 send_grad mb1");
  EXPECT_EQ(g.ops[0].duration_ps, 10 * kPsPerUs);
  EXPECT_EQ(g.ops[1].duration_ps, 0);  // a send takes no GPU time
  ASSERT_EQ(g.transfers.size(), 4u);
  const std::vector<std::pair<int, int>> ends = {{1, 8}, {3, 10}, {15, 6}, {13, 4}};
  for (std::size_t t = 0; t < ends.size(); ++t) {
    EXPECT_EQ(g.transfers[t].producer, ends[t].first) << t;
    EXPECT_EQ(g.transfers[t].consumer, ends[t].second) << t;
    EXPECT_EQ(g.transfers[t].size_bytes, 1000u);
  }
  EXPECT_EQ(g.transfers[0].src, 3);
  EXPECT_EQ(g.transfers[0].dst, 5);
  // The no-bubble timestamp of each transfer is its consumer's planned start.
  const std::vector<TimePs> start = planned_starts(g);
  const std::vector<TimePs> expected_us = {0,  10, 10, 20, 50, 50, 70, 70,   // rank 0
                                           10, 10, 20, 20, 30, 50, 50, 70};  // rank 1
  for (std::size_t i = 0; i < expected_us.size(); ++i) {
    EXPECT_EQ(start[i], expected_us[i] * kPsPerUs) << g.ops[i].label;
  }
  EXPECT_EQ(makespan_ps(g, start), 90 * kPsPerUs);
}

TEST(ChakraGraph, ConcurrentStreamsAreSerializedInDependencyOrderTiesById) {
  // Node 3 is ready first but node 2 has the smaller id among 2 and 3 once
  // node 1 ran; node 4 depends on 3 and comes last although its id is lower
  // than node 9's, which is free.
  const ComputeGraph g =
      chakra_graph({rank_of("a.0.et", {compute(9, 1), compute(4, 1, {3}), compute(3, 1, {1}),
                                       compute(2, 1, {1}), compute(1, 1)})},
                   {0});
  std::vector<std::string> order;
  for (const int op : g.gpu_order[0]) order.push_back(g.ops[op].label);
  EXPECT_EQ(order,
            (std::vector<std::string>{"r0 n1 c1", "r0 n2 c2", "r0 n3 c3", "r0 n4 c4", "r0 n9 c9"}));
}

TEST(ChakraGraph, CollectiveStepsPerAlgorithm) {
  const CollectiveSteps ar = collective_steps(ChakraCollective::kAllReduce, 1000, 4);
  EXPECT_EQ(ar.steps, 6);  // 2 (n - 1)
  EXPECT_EQ(ar.peers, 1);
  EXPECT_EQ(ar.chunk_bytes, 250u);
  EXPECT_EQ(collective_steps(ChakraCollective::kAllGather, 1000, 3).steps, 2);
  EXPECT_EQ(collective_steps(ChakraCollective::kAllGather, 1000, 3).chunk_bytes,
            334u);  // rounded up
  EXPECT_EQ(collective_steps(ChakraCollective::kReduceScatter, 1000, 4).steps, 3);
  const CollectiveSteps a2a = collective_steps(ChakraCollective::kAllToAll, 1000, 4);
  EXPECT_EQ(a2a.steps, 1);
  EXPECT_EQ(a2a.peers, 3);
  EXPECT_EQ(collective_steps(ChakraCollective::kAllReduce, 1000, 1).steps, 0);
  EXPECT_EQ(collective_steps(ChakraCollective::kAllReduce, 0, 4).steps, 0);
  EXPECT_THROW(collective_steps(ChakraCollective::kBroadcast, 1000, 4), std::invalid_argument);
}

struct Expansion {
  ChakraCollective type;
  std::size_t flows;  // over 4 ranks
  std::size_t ops;    // per rank
};

class ChakraCollectiveExpansion : public ::testing::TestWithParam<Expansion> {};

TEST_P(ChakraCollectiveExpansion, FlowsAndSizes) {
  const Expansion e = GetParam();
  std::vector<ChakraRank> ranks;
  for (int r = 0; r < 4; ++r) {
    ranks.push_back(
        rank_of("c." + std::to_string(r) + ".et", {compute(1, 5), collective(2, e.type, 4000)}));
    ranks.back().nodes[1].data_deps = {1};
  }
  const ComputeGraph g = chakra_graph(ranks, {0, 1, 2, 3});
  ASSERT_EQ(g.transfers.size(), e.flows);
  for (const Transfer& t : g.transfers) {
    EXPECT_EQ(t.size_bytes, 1000u);
    if (e.type != ChakraCollective::kAllToAll) {
      EXPECT_EQ(t.dst, (t.src + 1) % 4);  // the ring
    }
  }
  for (int r = 0; r < 4; ++r) EXPECT_EQ(g.gpu_order[r].size(), 1 + e.ops);
  // Each step starts when the previous one's chunk has arrived: an all-reduce
  // over a free network ends when the compute before it does.
  EXPECT_EQ(makespan_ps(g, planned_starts(g)), 5 * kPsPerUs);
}

INSTANTIATE_TEST_SUITE_P(Ring, ChakraCollectiveExpansion,
                         ::testing::Values(Expansion{ChakraCollective::kAllReduce, 24, 7},
                                           Expansion{ChakraCollective::kAllGather, 12, 4},
                                           Expansion{ChakraCollective::kReduceScatter, 12, 4},
                                           Expansion{ChakraCollective::kAllToAll, 12, 2}));

TEST(ChakraGraph, AllToAllSendsToEveryOtherRank) {
  std::vector<ChakraRank> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.push_back(rank_of("x", {collective(1, ChakraCollective::kAllToAll, 300)}));
  }
  const ComputeGraph g = chakra_graph(ranks, {0, 1, 2});
  std::set<std::pair<int, int>> pairs;
  for (const Transfer& t : g.transfers) pairs.insert({t.src, t.dst});
  EXPECT_EQ(pairs.size(), 6u);
}

TEST(ChakraGraph, MalformedTracesNameTheNode) {
  using T = ChakraNodeType;
  EXPECT_EQ(error_of({rank_of("t.0.et", {compute(1, 5), compute(2, 5, {7})})}),
            "t.0.et (rank 0): node 2 'c2' depends on node 7, which is not in the file");
  EXPECT_EQ(
      error_of({rank_of("t.0.et", {compute(1, 5, {3}), compute(2, 5, {1}), compute(3, 5, {2})})}),
      "t.0.et (rank 0): node 1 'c1' is on a dependency cycle (1 -> 3 -> 2 -> 1)");
  EXPECT_EQ(error_of({rank_of("t.0.et", {compute(1, 5), compute(1, 5)})}),
            "t.0.et (rank 0): node 1 'c1' has the id of an earlier node");
  EXPECT_EQ(error_of({rank_of("t.0.et", {compute(4, 5, {4})})}),
            "t.0.et (rank 0): node 4 'c4' depends on itself");
  EXPECT_EQ(error_of({rank_of("t.0.et", {comm(1, T::kSend, 1, 100)}), rank_of("t.1.et", {})}),
            "t.0.et (rank 0): node 1 'send' sends to rank 1 with tag 0, and that rank has no recv "
            "left for it (1 sends on this channel, 0 recvs)");
  EXPECT_EQ(error_of({rank_of("t.0.et", {}), rank_of("t.1.et", {comm(5, T::kRecv, 0, 100)})}),
            "t.1.et (rank 1): node 5 'recv' receives from rank 0 with tag 0, and that rank has no "
            "send for it");
  EXPECT_EQ(error_of({rank_of("t.0.et", {comm(1, T::kSend, 2, 100)}), rank_of("t.1.et", {})}),
            "t.0.et (rank 0): node 1 'send' has comm_dst 2, outside the trace's ranks 0..1");
  EXPECT_EQ(error_of({rank_of("t.0.et", {comm(1, T::kSend, 1, 100)}),
                      rank_of("t.1.et", {comm(1, T::kRecv, 0, 99)})}),
            "t.1.et (rank 1): node 1 'recv' receives 99 bytes, and its send (node 1 on rank 0) "
            "sends 100");
  ChakraNode odd = compute(3, 1);
  odd.type = 12;
  EXPECT_EQ(error_of({rank_of("t.0.et", {odd})}),
            "t.0.et (rank 0): node 3 'c3' has node type 12, which the Chakra schema does not "
            "define (1..7)");
  // Each rank waits for the other's send, which comes after its own recv.
  EXPECT_EQ(error_of({rank_of("t.0.et", {comm(1, T::kRecv, 1, 100), comm(2, T::kSend, 1, 100)}),
                      rank_of("t.1.et", {comm(1, T::kRecv, 0, 100), comm(2, T::kSend, 0, 100)})}),
            "t.0.et (rank 0): node 1 'recv' waits for a transfer that is never sent: the ranks' "
            "orders deadlock (each rank runs its nodes in dependency order, ties by id; rank 1 is "
            "stuck too, at node 1)");
}

TEST(ChakraGraph, CollectivesMustAgreeAcrossRanks) {
  const auto ar = ChakraCollective::kAllReduce;
  EXPECT_EQ(error_of({rank_of("t.0.et", {collective(1, ar, 100)}),
                      rank_of("t.1.et", {collective(1, ar, 200)})}),
            "t.1.et (rank 1): node 1 'coll' is collective 1 of its rank (all-reduce of 200 bytes), "
            "and rank 0's (node 1) is all-reduce of 100 bytes (the k-th collective of every rank "
            "must agree)");
  EXPECT_EQ(error_of({rank_of("t.0.et", {collective(1, ar, 100)}), rank_of("t.1.et", {})}),
            "t.0.et (rank 0): node 1 'coll' is collective 1 of its rank, and rank 1 has only 0 "
            "(every rank takes part in every collective, in order)");
  EXPECT_EQ(error_of({rank_of("t.0.et", {collective(1, ChakraCollective::kGather, 100)})}),
            "t.0.et (rank 0): node 1 'coll' has comm_type 3 (gather); only all-reduce (0), "
            "all-gather (2), all-to-all (6) and reduce-scatter (7) are expanded");
}

}  // namespace
