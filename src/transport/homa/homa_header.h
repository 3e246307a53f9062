// Homa's messages (Packet::message_type) and their fields in a packet's
// header words, after the Linux HomaModule's homa_wire.h.
//
// DATA (sender to receiver): seq = offset, payload_bytes;
//   words[0] message length, words[1] bytes the sender sends unscheduled.
// GRANT (receiver to sender): words[0] grant offset (may send bytes below
//   it), words[1] priority for the scheduled bytes.
// RESEND (receiver to sender): seq = offset, words[0] length (0: only "still
//   here, keep waiting"); it repeats the grant: words[1] offset, words[2]
//   priority, so a lost GRANT is repaired by the next RESEND.
// ACK (receiver to sender): the whole message has arrived.
// BUSY (sender to receiver): alive, deliberately sending other messages.
// NEED_ACK (sender to receiver): I may send nothing more; where are we?
// UNKNOWN (receiver to sender): no packet of this message ever arrived.
// Every message but DATA is header-only.
#pragma once

#include <cstdint>

#include "net/packet.h"

namespace safs::homa_header {

enum Type : std::uint8_t {
  kData = 0,
  kGrant,
  kResend,
  kAck,
  kBusy,
  kNeedAck,
  kUnknown,
};

struct DataFields {
  std::uint64_t message_length = 0;
  std::uint64_t unscheduled_bytes = 0;
};

struct GrantFields {
  std::uint64_t offset = 0;
  std::uint8_t priority = 0;
};

struct ResendFields {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  GrantFields grant;
};

inline void put_data(Packet& p, const DataFields& d) {
  p.words[0] = d.message_length;
  p.words[1] = d.unscheduled_bytes;
}

inline DataFields get_data(const Packet& p) { return {p.words[0], p.words[1]}; }

inline void put_grant(Packet& p, const GrantFields& g) {
  p.words[0] = g.offset;
  p.words[1] = g.priority;
}

inline GrantFields get_grant(const Packet& p) {
  return {p.words[0], static_cast<std::uint8_t>(p.words[1])};
}

inline void put_resend(Packet& p, const ResendFields& r) {
  p.seq = r.offset;
  p.words[0] = r.length;
  p.words[1] = r.grant.offset;
  p.words[2] = r.grant.priority;
}

inline ResendFields get_resend(const Packet& p) {
  return {p.seq, p.words[0], {p.words[1], static_cast<std::uint8_t>(p.words[2])}};
}

}  // namespace safs::homa_header
