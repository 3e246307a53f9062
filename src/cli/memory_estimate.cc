#include "cli/memory_estimate.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "console/bad_input.h"
#include "net/hop_distances.h"
#include "net/packet.h"
#include "net/port.h"
#include "net/priority_queue.h"
#include "net/topology_size.h"
#include "workload/bulk_chain.h"
#include "workload/compute/compute_graph.h"
#include "workload/flow_schedule.h"
#include "workload/inference/inference_workload.h"
#include "workload/poisson_flows.h"

namespace safs::cli {

namespace {

// Measured with Release builds on 2026-12-01 (peak RSS of `run` with one
// flow, a star of 60,000 hosts against a k = 64 fat tree, every transport):
// about 520 B per host for the network, plus 0 to 600 B of transport state
// (Homa the most). Rounded up.
constexpr std::uint64_t kHostBytes = 1'200;
// A port is its Port and its queue, counted by their sizes below, and about
// 100 B more for its name and the graph's indices; pFabric's queue adds
// about 300 B at switch ports.
constexpr std::uint64_t kPortBookkeepingBytes = 100;
constexpr std::uint64_t kPfabricQueueExtraBytes = 300;
// 50,000 listed flows on 1,000 hosts: 1.7 KB per flow (DCTCP) to 2.4 KB (Homa).
constexpr std::uint64_t kFlowBytes = 2'400;

std::uint64_t flow_bytes_listed(const ExperimentConfig& c, std::uint64_t& flows) {
  std::uint64_t bytes = 0;
  for (const ListedFlows* listed : c.workloads.all<ListedFlows>()) {
    for (const FlowSpec& f : listed->flows) bytes += f.size_bytes;
    flows += listed->flows.size();
  }
  for (const ComputeGraph* graph : c.workloads.all<ComputeGraph>()) {
    for (const Transfer& t : graph->transfers) bytes += t.size_bytes;
    flows += graph->transfers.size();
  }
  for (const PoissonSpec* p : c.workloads.all<PoissonSpec>()) flows += p->max_flows;
  return bytes;
}

// Receivers whose traffic is generated while running: each may fill a
// buffer on every switch of its longest path (an incast's worst case).
std::uint64_t generated_receivers(const ExperimentConfig& c, std::uint64_t hosts) {
  std::uint64_t receivers = 0;
  for (const BulkTraffic* bulk : c.workloads.all<BulkTraffic>()) receivers += bulk->chains.size();
  for (const PoissonSpec* p : c.workloads.all<PoissonSpec>())
    receivers += p->receivers.empty() ? hosts : p->receivers.size();
  receivers += c.workloads.count<InferenceWorkload>() * hosts;
  return receivers;
}

std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
  if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
  return a * b;
}

std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

std::uint64_t cgroup_limit_bytes() {
  std::ifstream in("/sys/fs/cgroup/memory.max");
  std::uint64_t limit = 0;
  return in >> limit ? limit : UINT64_MAX;  // "max" (no limit) does not parse
}

}  // namespace

std::uint64_t MemoryEstimate::total_bytes() const {
  std::uint64_t total = 0;
  for (const std::uint64_t part :
       {hosts_bytes, ports_bytes, routing_bytes, flows_bytes, packets_bytes}) {
    total = saturating_add(total, part);
  }
  return total;
}

std::string MemoryEstimate::breakdown() const {
  return "hosts " + format_bytes(hosts_bytes) + ", ports " + format_bytes(ports_bytes) +
         ", routing " + format_bytes(routing_bytes) + ", flows " + format_bytes(flows_bytes) +
         ", packets up to " + format_bytes(packets_bytes);
}

MemoryEstimate estimate_memory(const ExperimentConfig& c) {
  const TopologySize size = topology_size(c.topology);
  MemoryEstimate e;
  e.network_ports = size.ports();
  e.hosts_bytes = saturating_mul(size.hosts, kHostBytes);
  std::uint64_t port_bytes = sizeof(Port) + sizeof(StrictPriorityQueue) + kPortBookkeepingBytes;
  e.ports_bytes = saturating_mul(size.ports(), port_bytes);
  if (c.transport == "pfabric") {
    e.ports_bytes =
        saturating_add(e.ports_bytes, saturating_mul(size.switch_ports, kPfabricQueueExtraBytes));
  }
  e.routing_bytes =
      saturating_add(saturating_mul(size.routing_tables * size.twin_classes, sizeof(std::uint16_t)),
                     saturating_mul(size.switch_ports, HopDistances::kBytesPerSwitchPort));

  std::uint64_t flows = 0;
  const std::uint64_t listed_bytes = flow_bytes_listed(c, flows);
  e.flows_bytes = saturating_mul(flows, kFlowBytes);

  // Packets alive at once are bounded by the switch buffers, and by what
  // the workload can put in them: no more than a listed flow's size, no
  // more than a path of full buffers for each generated receiver.
  const SwitchConfig& sw = c.network.switches;
  std::uint64_t buffers = saturating_mul(size.switch_ports, sw.port_buffer_bytes);
  if (sw.shared_buffer_bytes > 0) {
    buffers = std::min(buffers, saturating_mul(size.switches, sw.shared_buffer_bytes));
  }
  const std::uint64_t per_receiver = saturating_mul(sw.port_buffer_bytes, size.max_switch_hops);
  const std::uint64_t workload = saturating_add(
      listed_bytes, saturating_mul(generated_receivers(c, size.hosts), per_receiver));
  const std::uint64_t packets =
      std::min(buffers, workload) / std::max<std::uint64_t>(c.mtu_bytes, 1);
  e.packets_bytes = saturating_mul(packets, sizeof(Packet));
  return e;
}

std::uint64_t default_memory_limit_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  std::uint64_t memory = pages > 0 && page_size > 0 ? static_cast<std::uint64_t>(pages) *
                                                          static_cast<std::uint64_t>(page_size)
                                                    : UINT64_MAX;
  memory = std::min(memory, cgroup_limit_bytes());
  return memory / 4 * 3;
}

void check_memory(const MemoryEstimate& estimate, const std::string& file, double limit_gb) {
  const bool given = limit_gb > 0;
  const std::uint64_t limit =
      given ? static_cast<std::uint64_t>(limit_gb * 1e9) : default_memory_limit_bytes();
  if (estimate.total_bytes() <= limit) return;
  throw console::BadInput(
      file + ": the run would need about " + format_bytes(estimate.total_bytes()) + " (" +
      estimate.breakdown() + "), more than the memory limit of " + format_bytes(limit) +
      (given ? "" : " (3/4 of this machine's)") +
      "; shrink the scenario or raise the limit with --memory-limit-gb or SAFS_MEMORY_LIMIT_GB");
}

std::string format_bytes(std::uint64_t bytes) {
  char text[32];
  const double b = static_cast<double>(bytes);
  if (b >= 1e9) {
    std::snprintf(text, sizeof text, "%.1f GB", b / 1e9);
  } else if (b >= 1e6) {
    std::snprintf(text, sizeof text, "%.1f MB", b / 1e6);
  } else {
    std::snprintf(text, sizeof text, "%.0f kB", b / 1e3);
  }
  return text;
}

}  // namespace safs::cli
