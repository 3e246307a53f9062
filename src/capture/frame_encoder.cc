#include "capture/frame_encoder.h"

#include <algorithm>

namespace safs::capture {

namespace {

// Preamble and start delimiter 8, inter-frame gap 12, FCS 4: in the wire
// bytes of a packet but not in what a capture stores.
constexpr std::uint32_t kNotCapturedBytes = 8 + 12 + 4;

class ByteWriter {
 public:
  explicit ByteWriter(std::uint8_t* at) : at_(at) {}
  void u8(std::uint32_t v) { *at_++ = static_cast<std::uint8_t>(v); }
  void u16(std::uint32_t v) {
    u8(v >> 8);
    u8(v);
  }
  void u32(std::uint32_t v) {
    u16(v >> 16);
    u16(v);
  }
  void u64(std::uint64_t v) {
    u32(static_cast<std::uint32_t>(v >> 32));
    u32(static_cast<std::uint32_t>(v));
  }
  void mac(std::uint32_t host) {  // locally administered, 02:00:00:00:HH:LL
    u16(0x0200);
    u16(0);
    u16(host);
  }
  std::uint8_t* at() const { return at_; }

 private:
  std::uint8_t* at_;
};

std::uint32_t ipv4_of(std::uint32_t host) { return (10u << 24) | (host & 0xffffu); }  // 10.0.H.L

// The flow's end with the lower host index gets the flow's port, the other
// kSafsPort, so both directions of a flow have one port pair.
std::uint16_t flow_port(std::uint32_t flow_id) {
  return static_cast<std::uint16_t>(1024 + flow_id % (65536 - 1024 - 1));
}

}  // namespace

std::uint16_t ipv4_checksum(const std::uint8_t* header, std::size_t bytes) {
  std::uint32_t sum = 0;
  for (std::size_t i = 0; i + 1 < bytes; i += 2) {
    sum += static_cast<std::uint32_t>(header[i] << 8 | header[i + 1]);
  }
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<std::uint16_t>(~sum);
}

void encode_frame(const Packet& p, Layer4 layer4, EncodedFrame& frame) {
  const std::size_t l4_bytes = layer4 == Layer4::kTcp ? kTcpBytes : kUdpBytes;
  frame.captured_bytes = kEthernetBytes + kIpv4Bytes + l4_bytes + kShimBytes;
  const std::uint32_t on_wire =
      p.wire_bytes > kNotCapturedBytes ? p.wire_bytes - kNotCapturedBytes : 0;
  // The shim is not on the simulated wire; a frame is never shorter than
  // what is captured of it.
  frame.frame_bytes = std::max<std::size_t>(on_wire, frame.captured_bytes);
  const std::uint32_t ip_length = static_cast<std::uint32_t>(frame.frame_bytes - kEthernetBytes);

  ByteWriter w(frame.bytes.data());
  w.mac(p.dst_host);
  w.mac(p.src_host);
  w.u16(0x0800);  // IPv4

  std::uint8_t* ip = w.at();
  const std::uint32_t ecn = p.ce ? 0b11 : (p.ecn_capable ? 0b10 : 0b00);  // CE, ECT(0), not-ECT
  w.u8(0x45);                                                             // version 4, 5 words
  w.u8(static_cast<std::uint32_t>(p.priority) << 5 | ecn);  // DSCP CS0-CS7 = priority, then ECN
  w.u16(ip_length);
  w.u16(0);       // identification
  w.u16(0x4000);  // don't fragment
  w.u8(64);       // TTL
  w.u8(layer4 == Layer4::kTcp ? 6 : 17);
  w.u16(0);  // checksum, filled below
  w.u32(ipv4_of(p.src_host));
  w.u32(ipv4_of(p.dst_host));
  const std::uint16_t checksum = ipv4_checksum(ip, kIpv4Bytes);
  ip[10] = static_cast<std::uint8_t>(checksum >> 8);
  ip[11] = static_cast<std::uint8_t>(checksum);

  const bool src_is_low = p.src_host <= p.dst_host;
  w.u16(src_is_low ? flow_port(p.flow_id) : kSafsPort);
  w.u16(src_is_low ? kSafsPort : flow_port(p.flow_id));
  if (layer4 == Layer4::kTcp) {
    w.u32(static_cast<std::uint32_t>(p.seq));
    w.u32(static_cast<std::uint32_t>(p.ack));
    w.u8(5 << 4);                     // data offset: 5 words
    w.u8(0x10 | (p.ece ? 0x40 : 0));  // ACK, and ECE on an ECN echo
    w.u16(65535);                     // window
    w.u16(0);                         // checksum (not computed: no payload is stored)
    w.u16(0);                         // urgent pointer
  } else {
    w.u16(ip_length - static_cast<std::uint32_t>(kIpv4Bytes));
    w.u16(0);  // checksum: none (allowed for UDP over IPv4)
  }

  w.u8('S');
  w.u8('F');
  w.u8('S');
  w.u8('1');
  w.u8(p.kind == PacketKind::kData ? 0 : 1);
  w.u8(p.message_type);
  w.u8(p.priority);
  w.u8((p.ecn_capable ? 1u : 0u) | (p.ce ? 2u : 0u) | (p.ece ? 4u : 0u));
  w.u32(p.flow_id);
  w.u32(p.payload_bytes);
  w.u64(p.seq);
  w.u64(p.ack);
  for (const std::uint64_t word : p.words) w.u64(word);
}

}  // namespace safs::capture
