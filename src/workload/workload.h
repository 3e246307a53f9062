// The plug-in interface of workloads. A run carries any number of workloads
// (listed flows, bulk chains, Poisson generators, a training computation, an
// inference server, ...); the experiment builds each from its spec, arms them
// in order, hands every completed flow to each, asks them whether the run may
// end and, after it, collects their outputs. A workload sees the run only
// through WorkloadHost: the transport interface, the simulator and the flow
// registry, never a concrete transport or the network.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/flow.h"

namespace safs {

class Simulator;
class Transport;
struct OpJitter;  // workload/compute/op_jitter.h

// The facts of the run a workload may need to shape its traffic.
struct RunShape {
  int num_hosts = 0;                // hosts 0..num_hosts-1
  std::uint64_t host_link_bps = 0;  // every host's NIC (a load's reference)
  std::uint32_t mtu_bytes = 0;      // payload per packet
  std::uint32_t header_bytes = 0;   // wire overhead per packet
  std::uint64_t seed = 1;           // the run's seed; streams come from next_random_stream
};

// How the run treats a flow a workload registers.
struct FlowTerms {
  bool measured = true;        // the run waits for it (false: background that ends with the run)
  double deadline_factor = 0;  // > 0: deadline = start + factor x the flow's ideal FCT
};

// What the run offers its workloads.
class WorkloadHost {
 public:
  virtual ~WorkloadHost() = default;
  virtual Simulator& sim() = 0;
  virtual Transport& transport() = 0;
  virtual const RunShape& shape() const = 0;
  // How the run's GPUs stray from the planned durations of compute ops.
  virtual const OpJitter& op_jitter() const = 0;
  // Records a flow under the next free id (ids are dense, in the order flows
  // are registered) and returns the spec the transport is to see: its
  // deadline may differ from the recorded one when the run models imperfect
  // timestamps (the records keep the true deadline). The caller starts it.
  virtual FlowSpec register_flow(FlowSpec flow, FlowTerms terms) = 0;
  // Registers a flow and starts it now; returns its id.
  virtual std::uint32_t launch(FlowSpec flow, FlowTerms terms) = 0;
  // The workload knows a transfer ahead (`planned`: as it will be launched,
  // its projected start in start_ps): the transport may plan it in. Not
  // passed on when the run models imperfect timestamps (an announcement's
  // timestamp would be exact).
  virtual void announce(const FlowSpec& /*planned*/) {}
  // The flow's no-bubble timestamp moved: the records learn it, and the
  // transport too (perturbed, late or not at all under imperfect timestamps).
  virtual void update_deadline(std::uint32_t flow_id, TimePs deadline_ps) = 0;
  // Whether consumer_waiting tells the transport anything: the run models
  // imperfect timestamps (with exact ones the transport has the truth) and
  // passes on waiting consumers ([timestamps] waiting_updates).
  virtual bool listens_for_waiting_consumers() const = 0;
  // The flow's consumer will be waiting for it from `from_ps` on (its GPU
  // idles with the consumer next) unless it arrives by then. If it has not,
  // the transport is told a timestamp of that moment: a runtime knows this
  // for certain (the receive is blocked), so the error model passes it
  // exactly (drops and delays apply). The records keep the true deadline.
  virtual void consumer_waiting(std::uint32_t flow_id, TimePs from_ps) = 0;
  // A stream index for the workload's own random numbers: one per caller, in
  // build order, so that adding a workload never shifts another's draws.
  virtual std::uint64_t next_random_stream() = 0;
  // The workload has just finished (see Workload::finished): the run ends if
  // nothing else holds it.
  virtual void workload_finished() = 0;
};

// Progress by the measure that ends the run, for the progress line.
struct WorkloadProgress {
  double done = 0;
  double expected = 0;
  std::string unit;  // "ops", "flows", "measured requests"
};

// What a workload adds to a finished run's outputs.
struct RunReport {
  nlohmann::ordered_json summary_sections = nlohmann::ordered_json::object();  // summary.json keys
  std::vector<std::pair<std::string, std::string>> files;  // name in the output directory, contents
};

class Workload {
 public:
  virtual ~Workload() = default;
  // Schedules the workload's first events; called once before the run, in
  // the order the workloads were built.
  virtual void arm() = 0;
  // Every completed flow reaches every workload; each ignores flows not its own.
  virtual void on_flow_complete(const FlowSpec& /*flow*/, TimePs /*at_ps*/) {}
  // Whether the run must wait for this workload: a run ends when every
  // measured flow has completed and every measured workload has finished.
  // Background workloads (bulk chains, unmeasured generators) never hold a run.
  virtual bool measured() const = 0;
  virtual bool finished() const = 0;
  // Progress toward finished(), if the workload has a countable measure.
  virtual std::optional<WorkloadProgress> progress() const { return std::nullopt; }
  // A warning for a run that stopped before the workload finished ("3 flows
  // did not complete"); empty if there is nothing to say.
  virtual std::string unfinished_note() const { return {}; }
  // Its sections of summary.json and its own files (ops.csv, requests.csv).
  virtual void report(RunReport& /*report*/) const {}
};

}  // namespace safs
