// Starts flows at their start times. One pending event, whatever the number
// of flows: flows are kept sorted by (start, id) and started in that order.
#pragma once

#include <cstddef>
#include <vector>

#include "engine/simulator.h"
#include "transport/flow.h"
#include "transport/transport.h"

namespace safs {

class FlowSchedule final : public EventHandler {
 public:
  FlowSchedule(Simulator& sim, Transport& transport, std::vector<FlowSpec> flows);

  // Schedules the first start; later ones follow one by one.
  void arm();
  void handle_event(EventId id) override;

  const std::vector<FlowSpec>& flows() const { return flows_; }

 private:
  Simulator& sim_;
  Transport& transport_;
  std::vector<FlowSpec> flows_;  // sorted by (start, id)
  std::size_t next_ = 0;
};

}  // namespace safs
