// A simulated packet as the bytes a capture on a real link would show:
// Ethernet II, IPv4 (DSCP from the packet's priority, ECN bits as marked) and
// TCP, or UDP for Homa, followed by a fixed "SFS1" header with the fields the
// simulator's transports carry (flow, sequence, their own header words). The
// layout is documented in docs/traces.md and decoded by tools/safs-sim.lua.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "net/packet.h"

namespace safs::capture {

enum class Layer4 : std::uint8_t { kTcp, kUdp };

inline constexpr std::size_t kEthernetBytes = 14;
inline constexpr std::size_t kIpv4Bytes = 20;
inline constexpr std::size_t kTcpBytes = 20;
inline constexpr std::size_t kUdpBytes = 8;
// magic 4, kind 1, message type 1, priority 1, flags 1, flow 4, payload 4,
// sequence 8, ACK 8, four header words 32.
inline constexpr std::size_t kShimBytes = 64;
inline constexpr std::size_t kMaxFrameBytes = kEthernetBytes + kIpv4Bytes + kTcpBytes + kShimBytes;
// The TCP or UDP port of the shim's decoder (tools/safs-sim.lua); the other
// end's port is derived from the flow id, so each flow is one conversation.
inline constexpr std::uint16_t kSafsPort = 9111;

struct EncodedFrame {
  std::array<std::uint8_t, kMaxFrameBytes> bytes{};
  std::size_t captured_bytes = 0;  // what the capture stores: headers and shim
  std::size_t frame_bytes = 0;     // the frame on the wire, without preamble, gap and FCS
};

// The frame's length is the packet's wire bytes less the preamble, the
// inter-frame gap and the FCS that the simulation's per-packet overhead
// (network.header_bytes) includes.
void encode_frame(const Packet& packet, Layer4 layer4, EncodedFrame& frame);

// The IPv4 header checksum (RFC 791): ones' complement of the ones'
// complement sum of the header's 16-bit words.
std::uint16_t ipv4_checksum(const std::uint8_t* header, std::size_t bytes);

}  // namespace safs::capture
