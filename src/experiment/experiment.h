// Wires one run together: simulator, packet pool, network, transport,
// workload and recorder, from a plain configuration (no file formats here).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/simulator.h"
#include "metrics/flow_recorder.h"
#include "net/packet_pool.h"
#include "net/topology.h"
#include "options/section_reader.h"
#include "transport/transport.h"
#include "workload/bulk_chain.h"
#include "workload/compute/compute_engine.h"
#include "workload/flow_schedule.h"
#include "workload/inference/inference_driver.h"
#include "workload/poisson_flows.h"

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
  std::vector<FlowSpec> flows;                 // ids 0..n-1 in order
  std::vector<BulkSpec> bulk;                  // closed-loop chains; never keep a run alive
  std::vector<PoissonSpec> poisson;            // open-loop flows from size distributions
  std::optional<ComputeGraph> compute;         // GPUs running ops linked by transfers
  std::optional<InferenceWorkload> inference;  // AFD decode serving, step by step
  // Generated flows get ids n, n+1, ... in the order they start.
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
  Transport& mutable_transport() { return *transport_; }
  // The computation, if the configuration has one.
  const ComputeEngine* compute() const { return compute_.get(); }
  // The inference workload, if the configuration has one.
  const InferenceDriver* inference() const { return inference_.get(); }
  InferenceDriver* mutable_inference() { return inference_.get(); }
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
  GrantObserver grant_observer_;  // the transport's environment points here
  std::unique_ptr<TransportEnv> env_;
  std::unique_ptr<Transport> transport_;
  // Registers a generated flow (assigning its id) and starts it.
  std::uint32_t launch(FlowSpec flow, bool measured, double deadline_factor);
  void finalize_records();
  TimePs ideal_fct(const FlowSpec& flow) const;  // alone on its empty path

  std::unique_ptr<FlowSchedule> schedule_;
  std::unique_ptr<BulkChains> bulk_;
  std::vector<std::unique_ptr<PoissonFlows>> poisson_;
  std::unique_ptr<ComputeEngine> compute_;
  std::unique_ptr<InferenceDriver> inference_;
  ComputeHooks compute_hooks();  // flows of a computation: measured, deadlines tracked
  bool started_ = false;
};

}  // namespace safs
