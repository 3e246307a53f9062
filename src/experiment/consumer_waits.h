// When a compute op's GPU idles waiting for an input past the op's no-bubble
// timestamp, the runtime knows its consumer is waiting: its receive is
// blocked. ConsumerWaits holds each such watch ("flow f is waited for from
// t on unless it arrives first") until its time, then asks whether the flow
// is still under way and, if so, passes it on. Only runs with imperfect
// timestamps watch (docs/imperfect-semantics.md): with exact ones the
// transport already has the truth.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>

#include "engine/simulator.h"

namespace safs {

class ConsumerWaits final : public EventHandler {
 public:
  // `waiting(flow_id)` is called at the watch's time, or at once for a time
  // already past; it decides itself whether the flow is still under way.
  ConsumerWaits(Simulator& sim, std::function<void(std::uint32_t flow_id)> waiting)
      : sim_(sim), waiting_(std::move(waiting)) {}
  ConsumerWaits(const ConsumerWaits&) = delete;
  ConsumerWaits& operator=(const ConsumerWaits&) = delete;

  void watch(std::uint32_t flow_id, TimePs from_ps) {
    if (from_ps <= sim_.now()) {
      waiting_(flow_id);
      return;
    }
    due_.emplace(sim_.schedule_at(from_ps, this), flow_id);
  }

  void handle_event(EventId id) override {
    const auto found = due_.find(id);
    const std::uint32_t flow_id = found->second;
    due_.erase(found);
    waiting_(flow_id);
  }

 private:
  Simulator& sim_;
  std::function<void(std::uint32_t)> waiting_;
  std::unordered_map<EventId, std::uint32_t> due_;  // by event: one watch per flow at most
};

}  // namespace safs
