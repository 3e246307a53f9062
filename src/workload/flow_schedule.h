// Listed flows ([[flows]]): each starts at its start time and the run waits
// for all of them. One pending event, whatever the number of flows: flows are
// kept sorted by (start, id) and started in that order.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "base/flow.h"
#include "engine/simulator.h"
#include "transport/transport.h"
#include "workload/workload.h"

namespace safs {

// The spec: flows registered when the run is built, so they take the first
// ids (0..n-1 when this is the first workload), in this order.
struct ListedFlows {
  std::vector<FlowSpec> flows;
};

std::unique_ptr<Workload> make_workload(const ListedFlows& spec, WorkloadHost& host);
std::string describe_workload(const ListedFlows& spec);

class FlowSchedule final : public Workload, public EventHandler {
 public:
  // `flows` carry the ids they were registered under.
  FlowSchedule(Simulator& sim, Transport& transport, std::vector<FlowSpec> flows);

  // Schedules the first start; later ones follow one by one.
  void arm() override;
  void handle_event(EventId id) override;
  void on_flow_complete(const FlowSpec& flow, TimePs at_ps) override;
  bool measured() const override { return !flows_.empty(); }
  bool finished() const override { return completed_ == flows_.size(); }
  std::optional<WorkloadProgress> progress() const override;
  std::string unfinished_note() const override;

  const std::vector<FlowSpec>& flows() const { return flows_; }

 private:
  bool owns(std::uint32_t flow_id) const;

  Simulator& sim_;
  Transport& transport_;
  std::vector<FlowSpec> flows_;  // sorted by (start, id)
  std::uint32_t first_id_ = 0;   // registered ids are consecutive
  std::vector<bool> complete_;   // by id - first_id_
  std::size_t next_ = 0;
  std::size_t completed_ = 0;
};

}  // namespace safs
