// A packet as the network sees it. Packets come from a PacketPool, carry their
// route (as in htsim), and have a fixed layout: transports put their own
// header fields in `words` instead of allocating.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "base/time.h"

namespace safs {

struct Route;

// 8 strict priority levels; 7 is served first (Homa's convention).
inline constexpr int kNumPriorities = 8;
inline constexpr std::uint8_t kTopPriority = kNumPriorities - 1;

// Data or control, all the network knows of what a packet is. Switches look
// only at priority, rank, size and the ECN bits; which message of its
// protocol a packet is (an ACK, a grant, ...) is the transport's business,
// in `message_type` and `words`, read and written by the transport's header
// codec.
enum class PacketKind : std::uint8_t {
  kData,     // carries flow payload
  kControl,  // header only: ACKs, grants, probes, ...
};

// Fields that every hop touches (route, links, size, priority, ECN bits) come
// first and the packet is cache-line aligned, so forwarding reads one cache
// line; the transport's fields sit in the second.
struct alignas(64) Packet {
  // Forwarding: the route and the index of the next hop on it.
  const Route* route = nullptr;
  Packet* next = nullptr;        // intrusive link: the queue or wire this packet is on
  TimePs wire_arrive_at_ps = 0;  // on a wire: when it reaches the far end
  std::uint64_t rank = 0;        // smaller = more urgent, for rank-based queues (pFabric)
  std::uint32_t wire_bytes = 0;  // payload + per-packet overhead: what links serialise
  std::uint16_t next_hop = 0;

  PacketKind kind = PacketKind::kData;
  std::uint8_t message_type = 0;  // the transport's own message kind; the network never reads it
  std::uint8_t priority = 0;      // 0..7, 7 served first
  bool ecn_capable = false;       // ECT
  bool ce = false;                // congestion experienced (set by a switch)
  bool ece = false;               // ECN echo on an ACK

  std::uint32_t flow_id = 0;
  std::uint32_t src_host = 0;
  std::uint32_t dst_host = 0;
  std::uint32_t payload_bytes = 0;

  // The transport's fields: read at the ends, never by a switch.
  std::uint64_t seq = 0;  // byte offset of the payload in its flow
  std::uint64_t ack = 0;  // cumulative ACK: next byte expected
  TimePs sent_at_ps = 0;  // when the transport handed it to the NIC (RTT samples)
  TimePs echo_ps = 0;     // sender timestamp echoed by an ACK

  std::array<std::uint64_t, 4> words{};  // transport-defined header fields
};

static_assert(offsetof(Packet, seq) == 64, "what every hop reads fills exactly the first line");
static_assert(sizeof(Packet) == 128, "two cache lines");

}  // namespace safs
