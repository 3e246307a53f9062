// A header-only message from one side of a flow to the other (an ACK, a
// grant, ...). The caller fills the message's fields through its header codec
// and pushes it into the NIC queue with forward().
#pragma once

#include <cstdint>

#include "engine/simulator.h"
#include "net/packet.h"
#include "net/packet_pool.h"
#include "net/route.h"
#include "transport/flow.h"
#include "transport/transport.h"

namespace safs {

inline Packet& new_control_packet(const TransportEnv& env, const FlowSpec& flow, const Route& route,
                                  bool to_sender, std::uint8_t message_type,
                                  std::uint8_t priority) {
  Packet& p = *env.pool.acquire();
  p.route = &route;
  p.next_hop = 0;  // enters this host's NIC queue
  p.kind = PacketKind::kControl;
  p.message_type = message_type;
  p.priority = priority;
  p.flow_id = flow.id;
  p.src_host = static_cast<std::uint32_t>(to_sender ? flow.dst : flow.src);
  p.dst_host = static_cast<std::uint32_t>(to_sender ? flow.src : flow.dst);
  p.wire_bytes = env.header_bytes;
  p.sent_at_ps = env.sim.now();
  return p;
}

}  // namespace safs
