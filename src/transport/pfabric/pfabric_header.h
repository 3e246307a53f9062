// pFabric's messages (Packet::message_type) and their header words. Every
// packet carries its flow's remaining bytes as Packet::rank (ACKs: 0), the
// one field pFabric switches read.
//
// DATA (sender to receiver): seq = offset, payload_bytes, sent_at_ps.
// PROBE (sender to receiver, probe mode): a minimum-size packet with no data;
//   seq = the sender's cumulative point.
// ACK (receiver to sender), one per DATA or PROBE: ack = cumulative point,
//   seq = the segment it answers, echo_ps = its sent_at_ps;
//   words[0] bit 0: it answers a PROBE (seq then names no segment);
//   words[1..3] selective ACK of the 192 segments after the cumulative point
//   (bit i = segment cumulative_segment + 1 + i has arrived).
#pragma once

#include <bit>
#include <cstdint>

#include "net/packet.h"

namespace safs::pfabric_header {

enum Type : std::uint8_t {
  kData = 0,
  kAck,
  kProbe,
};

inline constexpr std::uint64_t kSackSegments = 3 * 64;

inline void set_answers_probe(Packet& ack, bool probe) { ack.words[0] = probe ? 1 : 0; }
inline bool answers_probe(const Packet& ack) { return (ack.words[0] & 1u) != 0; }

// Marks segment `base + bit` as received, bit < kSackSegments.
inline void set_sack(Packet& ack, std::uint64_t bit) {
  ack.words[1 + bit / 64] |= std::uint64_t{1} << (bit % 64);
}

// Calls visit(bit) for every selectively ACKed segment offset, in order.
template <typename Visit>
void for_each_sack(const Packet& ack, Visit visit) {
  for (std::size_t w = 0; w < 3; ++w) {
    for (std::uint64_t bits = ack.words[1 + w]; bits != 0; bits &= bits - 1) {
      visit(64 * w + static_cast<std::uint64_t>(std::countr_zero(bits)));
    }
  }
}

}  // namespace safs::pfabric_header
