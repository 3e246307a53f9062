// Long-lived bulk traffic: each chain sends flows of a fixed size from one
// host to another, until `count` flows (0: until the run ends). By default a
// closed loop: the next flow starts the moment the previous one completes.
// This is how the receiver-incast microbenchmark's background senders "send
// 8 MiB flows back to back until the last urgent flow is done". With a
// period, an open loop: flow k starts at start + k x period whether or not
// the ones before have completed (bursts that recur, like a data-parallel
// job's gradient reduce-scatter once per iteration).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/flow.h"
#include "engine/simulator.h"
#include "workload/workload.h"

namespace safs {

struct BulkSpec {
  int src = 0;
  int dst = 0;
  std::uint64_t size_bytes = 0;
  TimePs start_ps = 0;
  FlowClass flow_class = FlowClass::kBackground;
  std::uint32_t count = 0;  // flows in the chain; 0 = unlimited
  TimePs period_ps = 0;     // 0: back to back (closed loop); else one flow per period
};

// The spec: every chain of the run in one workload (one pending start event
// for all of them). Chains are background: they never keep a run alive.
struct BulkTraffic {
  std::vector<BulkSpec> chains;
};

class BulkChains final : public Workload, public EventHandler {
 public:
  // `launch` registers and starts a flow and returns the id it gave it.
  using Launch = std::function<std::uint32_t(const FlowSpec&)>;
  BulkChains(Simulator& sim, std::vector<BulkSpec> chains, Launch launch);

  void arm() override;  // schedules the next start due
  void handle_event(EventId id) override;
  // Starts the chain's next flow if `flow` belonged to a chain.
  void on_flow_complete(const FlowSpec& flow, TimePs at_ps) override;
  bool measured() const override { return false; }
  // Every chain has sent its count (never, for a chain without one).
  bool finished() const override;

 private:
  void launch_next(std::size_t chain);

  Simulator& sim_;
  std::vector<BulkSpec> chains_;
  std::vector<std::uint32_t> launched_;  // per chain
  // Per chain: when its next flow starts by the clock (its first flow, or a
  // periodic chain's next); kTimeNever once that is up to a completion.
  std::vector<TimePs> next_start_ps_;
  std::unordered_map<std::uint32_t, std::size_t> chain_of_flow_;  // live flow id -> chain
  Launch launch_;
  std::vector<std::size_t> start_order_;  // chains by first start, then index: launch order
  TimePs armed_at_ps_ = kTimeNever;       // the pending start event, if any
};

std::unique_ptr<Workload> make_workload(const BulkTraffic& spec, WorkloadHost& host);
std::string describe_workload(const BulkTraffic& spec);

}  // namespace safs
