// Wires one run together: simulator, packet pool, network, transport,
// workloads and recorder, from a plain configuration (no file formats here).
// It knows no workload kind: it builds each workload from its spec, arms
// them in order, passes them every completed flow and ends the run when no
// measured flow and no measured workload is left (workload/workload.h).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/simulator.h"
#include "experiment/timestamp_errors.h"
#include "metrics/flow_recorder.h"
#include "net/packet_pool.h"
#include "net/topology.h"
#include "options/section_reader.h"
#include "transport/transport.h"
#include "workload/compute/op_jitter.h"
#include "workload/workload.h"
#include "workload/workload_spec.h"

namespace safs {

class TransportSetup;

struct ExperimentConfig {
  std::uint64_t seed = 1;
  TimePs stop_ps = kPsPerSec;  // safety limit on simulated time
  TopologySpec topology;
  NetworkConfig network;
  std::uint32_t mtu_bytes = 4096;
  std::uint32_t header_bytes = 78;
  std::string transport = "dctcp";
  // [transport.NAME] keys given (the rest keep the transport's defaults),
  // read through its knob table when the run is built.
  Settings transport_params;
  // Mixed tenants: the transport of background flows (FlowClass::kBackground)
  // and its own [transport.NAME] keys; urgent flows keep `transport`. Empty,
  // or equal to `transport`: every flow runs on `transport`.
  std::string background_transport;
  Settings background_transport_params;
  bool mixed_tenants() const {
    return !background_transport.empty() && background_transport != transport;
  }
  // Built and armed in this order. Listed flows take their ids when the run
  // is built; generated flows get the next ids in the order they start.
  WorkloadSpecs workloads;
  // How wrong the no-bubble timestamps the transport sees are ([timestamps]).
  TimestampErrorModel timestamps;
  // How far compute ops stray from their planned durations ([jitter]).
  OpJitter op_jitter;
};

struct NetworkTotals {
  std::uint64_t packet_hops = 0;  // packets put on any link
  std::uint64_t queue_drops = 0;
  std::uint64_t wire_losses = 0;
  std::uint64_t ecn_marks = 0;
  std::uint64_t max_switch_queue_bytes = 0;
};

class Experiment {
 public:
  explicit Experiment(ExperimentConfig config);
  ~Experiment();

  // Runs until every flow completes or stop_ps; returns the wall time in seconds.
  double run();
  // Runs to simulated time `t` (or until every flow completes), for tests and
  // tools that look at the network part-way through.
  void run_until(TimePs t);

  const ExperimentConfig& config() const { return config_; }
  Simulator& sim() { return sim_; }
  Network& network() { return *network_; }
  const FlowRecorder& recorder() const { return *recorder_; }
  // Before the run: hand each finished flow's final record to `sink` and keep
  // only the live flows' records (FlowRecorder::stream_to).
  void stream_records(FlowRecorder::Sink sink);
  Transport& mutable_transport() { return *transport_; }
  // The run's workloads, in the order of the configuration's specs.
  const std::vector<std::unique_ptr<Workload>>& workloads() const { return workloads_; }
  // The first workload of type W (ComputeWorkload, InferenceDriver, ...), or
  // null: for outputs and traces that know a kind.
  template <class W>
  const W* find_workload() const {
    for (const auto& w : workloads_) {
      if (const auto* found = dynamic_cast<const W*>(w.get())) return found;
    }
    return nullptr;
  }
  template <class W>
  W* find_workload() {
    return const_cast<W*>(static_cast<const Experiment&>(*this).find_workload<W>());
  }
  // Every workload's outputs, in order (after the run).
  RunReport report() const;
  // Observers for traces: they see grants as they are sent and change nothing.
  void set_grant_observer(GrantObserver observer) { grant_observer_ = std::move(observer); }
  const Transport& transport() const { return *transport_; }
  const PacketPool& pool() const { return pool_; }
  NetworkTotals network_totals() const;

 private:
  class CompletionWatcher;

  ExperimentConfig config_;
  Simulator sim_;
  PacketPool pool_;
  std::unique_ptr<Network> network_;
  std::unique_ptr<CompletionWatcher> watcher_;
  std::unique_ptr<FlowRecorder> recorder_;
  std::unique_ptr<TransportSetup> transport_setup_;
  std::unique_ptr<TransportSetup> background_setup_;  // mixed tenants only
  GrantObserver grant_observer_;                      // the transport's environment points here
  std::unique_ptr<TransportEnv> env_;
  std::unique_ptr<Transport> transport_;
  class Host;  // what the workloads see of the run
  std::unique_ptr<Host> host_;
  std::vector<std::unique_ptr<Workload>> workloads_;
  bool started_ = false;

  FlowSpec register_flow(FlowSpec flow, FlowTerms terms);
  void finalize_records();
  TimePs ideal_fct(const FlowSpec& flow) const;  // alone on its empty path
};

}  // namespace safs
