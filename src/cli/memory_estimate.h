// What a run will need in memory, estimated from its configuration before
// anything is built, and the limit `run` and `validate` hold it to: a
// scenario too large for the machine is refused with the estimate (exit 2)
// instead of swapping or being killed part-way through building.
#pragma once

#include <cstdint>
#include <string>

#include "experiment/experiment.h"

namespace safs::cli {

struct MemoryEstimate {
  std::uint64_t hosts_bytes = 0;    // per-host state: node, NIC bookkeeping, transport
  std::uint64_t ports_bytes = 0;    // egress ports and their queues
  std::uint64_t routing_bytes = 0;  // distance tables, switch links by twin class
  std::uint64_t flows_bytes = 0;    // flows known in advance: records, routes, transport state
  std::uint64_t packets_bytes = 0;  // the packet pool, for the buffers the workload can fill
  std::uint64_t network_ports = 0;  // how big the build is (for the "building" notice)

  std::uint64_t total_bytes() const;
  std::string breakdown() const;  // "hosts 0.6 GB, ports 2.1 GB, ..."
};

MemoryEstimate estimate_memory(const ExperimentConfig& config);

// The default limit: three quarters of the machine's memory (or of the
// control group's limit, if lower), leaving room for the system and for
// several runs of a sweep.
std::uint64_t default_memory_limit_bytes();

// Throws console::BadInput, naming `file`, when the estimate exceeds
// `limit_gb` (0: the default limit).
void check_memory(const MemoryEstimate& estimate, const std::string& file, double limit_gb);

// "640 kB", "12.3 MB", "2.6 GB".
std::string format_bytes(std::uint64_t bytes);

}  // namespace safs::cli
