// The packets every transport builds, with the fields the network needs
// filled in; the caller adds its message's fields through its header codec.
#pragma once

#include <cstdint>

#include "base/flow.h"
#include "engine/simulator.h"
#include "net/packet.h"
#include "net/packet_pool.h"
#include "net/route.h"
#include "transport/transport.h"

namespace safs {

// A header-only message from one side of a flow to the other (an ACK, a
// grant, ...), to be pushed into the NIC queue with forward().
inline Packet& new_control_packet(const TransportEnv& env, const FlowSpec& flow, const Route& route,
                                  bool to_sender, std::uint8_t message_type,
                                  std::uint8_t priority) {
  Packet& p = *env.pool.acquire();
  p.route = &route;
  ++route.packets_alive;
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

// A packet from the sender toward the receiver that the host NIC pulled
// (DATA, a probe): it leaves at hop 1, past the NIC.
inline Packet& new_pulled_packet(const TransportEnv& env, const FlowSpec& flow, const Route& route,
                                 PacketKind kind, std::uint8_t message_type) {
  Packet& p = *env.pool.acquire();
  p.route = &route;
  ++route.packets_alive;
  p.next_hop = 1;  // hop 0 is this NIC
  p.kind = kind;
  p.message_type = message_type;
  p.flow_id = flow.id;
  p.src_host = static_cast<std::uint32_t>(flow.src);
  p.dst_host = static_cast<std::uint32_t>(flow.dst);
  p.sent_at_ps = env.sim.now();
  return p;
}

// Counts a control packet that is leaving: every one in the control totals;
// one that is not an ACK also as scheduling control, for the transport and
// for the side of the flow that sends it.
inline void count_control(TransportStats& stats, const Packet& p, bool is_ack,
                          std::uint64_t& side_control_packets) {
  ++stats.control_packets;
  stats.control_bytes += p.wire_bytes;
  if (!is_ack) {
    ++stats.scheduling_packets;
    ++side_control_packets;
  }
}

}  // namespace safs
