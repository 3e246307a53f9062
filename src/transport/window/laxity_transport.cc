#include "transport/window/laxity_transport.h"

#include "engine/simulator.h"

namespace safs {

LaxityTransport::LaxityTransport(TransportEnv& env, const WindowConfig& window,
                                 const LaxityLevels& ladder,
                                 std::unique_ptr<CongestionControl> control)
    : WindowTransport(env, window, std::move(control)),
      ladder_(ladder),
      top_level_(window.urgent_priority) {}

std::uint8_t LaxityTransport::send_level(std::uint32_t flow_id) const {
  const SenderFlow* flow = sender_flow(flow_id);
  return flow != nullptr ? level(*flow) : 0;
}

// The first segment queues at the flow's level, not at the class's.
void LaxityTransport::on_sender_start(SenderFlow& flow) { flow.queue_priority = level(flow); }

WindowTransport::SendGate LaxityTransport::send_gate(SenderFlow& flow) {
  return {true, level(flow)};
}

TimePs LaxityTransport::laxity_ps(const SenderFlow& flow) const {
  if (!flow.spec.has_deadline()) return kTimeNever;
  const TimePs drain =
      serialization_ps(flow.spec.size_bytes - flow.snd_una, flow.data_route.bottleneck_bps());
  return flow.spec.deadline_ps - env().sim.now() - drain;
}

std::uint8_t LaxityTransport::level(const SenderFlow& flow) const {
  if (!urgent_class(flow.spec)) return class_priority(flow.spec);
  return laxity_level(ladder_, top_level_, laxity_ps(flow), flow.base_rtt_ps);
}

}  // namespace safs
