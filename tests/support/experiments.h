// Small builders for experiment configurations used across tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/experiment.h"
#include "workload/bulk_chain.h"
#include "workload/flow_schedule.h"
#include "workload/poisson_flows.h"

namespace safs::testing {

inline ExperimentConfig star(int hosts, std::uint32_t mtu_bytes = 4096) {
  ExperimentConfig config;
  config.topology.kind = TopologyKind::kStar;
  config.topology.hosts = hosts;
  config.mtu_bytes = mtu_bytes;
  return config;
}

// The configuration's listed flows ([[flows]]), added as its first workload if
// it has none yet.
inline std::vector<FlowSpec>& listed_flows(ExperimentConfig& config) {
  return config.workloads.find_or_add<ListedFlows>().flows;
}

inline const std::vector<FlowSpec>& listed_flows(const ExperimentConfig& config) {
  static const std::vector<FlowSpec> none;
  const ListedFlows* listed = config.workloads.find<ListedFlows>();
  return listed != nullptr ? listed->flows : none;
}

inline void add_flow(ExperimentConfig& config, int src, int dst, std::uint64_t size_bytes,
                     TimePs start_ps = 0) {
  FlowSpec flow;
  flow.id = static_cast<std::uint32_t>(listed_flows(config).size());
  flow.src = src;
  flow.dst = dst;
  flow.size_bytes = size_bytes;
  flow.start_ps = start_ps;
  listed_flows(config).push_back(flow);
}

// An urgent flow due at `deadline_ps`.
inline void add_urgent_flow(ExperimentConfig& config, int src, int dst, std::uint64_t size_bytes,
                            TimePs deadline_ps, TimePs start_ps = 0) {
  add_flow(config, src, dst, size_bytes, start_ps);
  FlowSpec& flow = listed_flows(config).back();
  flow.flow_class = FlowClass::kUrgent;
  flow.deadline_ps = deadline_ps;
}

// The AFD dispatch pattern as a repeated incast: 16 senders each send 56 KiB
// (14 packets) to host 16 at once, every 2 ms for `rounds` rounds, over
// 200 KB switch ports, each due 100 us after its round starts (line rate
// for the whole incast, about 75 us, plus a few RTTs). SAFS.
inline constexpr int kDispatchSenders = 16;
inline constexpr TimePs kDispatchRoundPs = 2 * kPsPerMs;
inline ExperimentConfig repeated_dispatch(int rounds) {
  ExperimentConfig config = star(kDispatchSenders + 1);
  config.network.switches.port_buffer_bytes = 200'000;
  config.transport = "safs";
  for (int round = 0; round < rounds; ++round) {
    const TimePs start = round * kDispatchRoundPs;
    for (int i = 0; i < kDispatchSenders; ++i) {
      add_urgent_flow(config, i, kDispatchSenders, 57'344, start + 100 * kPsPerUs, start);
    }
  }
  return config;
}

// Wire bytes of a flow: payload plus one header per packet.
inline std::uint64_t wire_bytes(std::uint64_t size_bytes, std::uint32_t mtu, std::uint32_t header) {
  return size_bytes + (size_bytes + mtu - 1) / mtu * header;
}

inline double jain_fairness(const std::vector<double>& x) {
  double sum = 0, sum_sq = 0;
  for (const double v : x) {
    sum += v;
    sum_sq += v * v;
  }
  return sum * sum / (static_cast<double>(x.size()) * sum_sq);
}

}  // namespace safs::testing
