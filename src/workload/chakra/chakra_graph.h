// Chakra execution traces (one ChakraRank per rank) as a ComputeGraph, the
// workload the compute engine runs:
//  - each rank's nodes run on its host in one order: a topological order of
//    the rank's ctrl_deps and data_deps, ties broken by the smaller node id
//    (Chakra's converters number nodes in the order the host issued them), so
//    the rank's concurrent streams are serialized;
//  - compute, memory and metadata nodes are ops of their duration_micros;
//  - a send and a recv are zero-duration ops joined by a transfer of the
//    send's comm_size; the k-th send from rank a to rank b with tag t pairs
//    with the k-th recv on b from a with tag t (the network time replaces
//    the nodes' recorded durations);
//  - the k-th collective of every rank is one collective over all ranks,
//    expanded into point-to-point steps (ring for all-reduce, all-gather
//    and reduce-scatter, direct for all-to-all) between zero-duration ops.
// docs/workloads.md has the details and why.
#pragma once

#include <vector>

#include "workload/chakra/chakra_trace.h"
#include "workload/compute/compute_graph.h"

namespace safs {

// Point-to-point steps of one collective of `bytes` over `ranks` ranks:
// each step every rank sends `chunk_bytes` (bytes / ranks, rounded up) to
// each of `peers` others, after the previous step's data has arrived.
struct CollectiveSteps {
  int steps = 0;  // 0: nothing to move (one rank or no bytes)
  int peers = 1;  // ring: the next rank; direct all-to-all: every other rank
  std::uint64_t chunk_bytes = 0;
};
// Throws std::invalid_argument for a collective it does not expand.
CollectiveSteps collective_steps(ChakraCollective type, std::uint64_t bytes, int ranks);
const char* collective_name(ChakraCollective type);

// `rank_hosts[r]` is rank r's host (distinct hosts). Throws
// std::invalid_argument naming the rank's file and the node for a trace it
// cannot run: an unknown node type, a dependency on a missing node or a
// cycle, a send without its recv, collectives that differ between ranks, an
// unsupported collective, or orders that deadlock across ranks.
ComputeGraph chakra_graph(const std::vector<ChakraRank>& ranks, const std::vector<int>& rank_hosts);

}  // namespace safs
