// The per-flow state of a transport, found by flow id. Flows live in a deque
// so their addresses never change: packets point at the routes inside them.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "net/network.h"
#include "transport/flow.h"

namespace safs {

// `Flow` needs members `spec`, `data_route` and `ack_route`.
template <typename Flow>
class FlowTable {
 public:
  // Creates the state of a new flow with its routes in both directions.
  Flow& add(Network& net, const FlowSpec& spec) {
    Flow& flow = flows_.emplace_back();
    flow.spec = spec;
    flow.data_route = net.route(spec.src, spec.dst, spec.id);
    flow.ack_route = net.route(spec.dst, spec.src, spec.id);
    if (by_id_.size() <= spec.id) by_id_.resize(spec.id + 1, nullptr);
    by_id_[spec.id] = &flow;
    return flow;
  }
  // nullptr for an id that was never added.
  Flow* find(std::uint32_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }

 private:
  std::deque<Flow> flows_;
  std::vector<Flow*> by_id_;
};

}  // namespace safs
