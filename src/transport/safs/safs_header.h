// SAFS messages and the fields they carry in a packet's header words. SAFS
// runs on the window transport, so DATA and ACK are window_header's; SAFS
// adds GRANT, META and REPORT.
//
// DATA and META carry the flow's semantics, so a receiver learns a flow from
// whichever of its packets arrives first and a lost packet loses nothing:
//   words[0] no-bubble timestamp (ps, kTimeNever for none)
//   words[1] flow size (bytes)
//   words[2] dependency (consumer op)
//   words[3] bit 0 urgent, bit 1 sent unscheduled, bit 2 started under its
//            stream's lease (the previous transfer's), bit 3 the whole flow
//            is sent blind, bit 4 the flow is sent under its window alone
//            (background with grant_background off), bit 5 the flow is on
//            its sender's background stream, bits 8..39 criticality,
//            bits 40..63 version of the timestamp (raised when it moves, so
//            an older packet overtaken by a META cannot restore it)
// GRANT:
//   words[0] rate (bit/s), words[1] lease (ps), words[2] byte cap,
//   words[3] bits 0..31 epoch, bits 32..39 priority, bits 40..63 the
//            timestamp version the receiver holds (a sender with a newer one
//            re-sends its META: a lost META is repaired by the next grant)
// REPORT (sender to receiver: what the sender's uplink can give this flow):
//   words[0] achievable rate (bit/s; UINT64_MAX = no limit)
// ANNOUNCE and PLANNED_GRANT are addressed to a host (flow id
// kHostMessageFlowId): the transfer has no flow yet. The sender numbers its
// announcements (24 bits, wrapping) and matches grants by that number.
// ANNOUNCE (sender to receiver: a transfer its compute schedule will start):
//   words[0] no-bubble timestamp (ps), words[1] size (bytes), words[2]
//   dependency, words[3] bits 0..39 time until its projected start (ps,
//   under 1.1 s), bits 40..63 the announcement's number
// PLANNED_GRANT: as GRANT, with the announcement's number in bits 40..63 of
//   words[3] instead of a timestamp version
// STREAM_GRANT (receiver to sender host, background_streams): as GRANT, for
//   all of the sender's background flows to this receiver
// An ACK may carry a flow's grant (grant_carrier_wait_us): the GRANT's words,
//   with bit 63 of words[1] set to say so (a lease is far shorter than 2^63
//   ps). On the wire it is a TCP option of kGrantOptionBytes.
#pragma once

#include <cstdint>
#include <limits>

#include "base/flow.h"
#include "core/grant.h"
#include "net/packet.h"
#include "transport/window/window_header.h"

namespace safs::safs_header {

enum Type : std::uint8_t {
  kGrant = window_header::kFirstDerivedType,  // receiver to sender
  kMeta,                                      // sender to receiver: the semantics moved
  kReport,                                    // sender to receiver: achievable rate
  kAnnounce,                                  // sender to receiver host: a transfer to come
  kPlannedGrant,                              // receiver to sender host: its grant
  kStreamGrant,                               // receiver to sender host: its background's
};

inline constexpr std::uint32_t kAnnouncementMask = (1u << 24) - 1;
inline constexpr TimePs kMaxAnnounceLeadPs = (TimePs{1} << 40) - 1;

struct Semantics {
  TimePs no_bubble_ps = kTimeNever;
  std::uint64_t size_bytes = 0;
  std::uint64_t dependency = 0;
  bool urgent = false;
  bool unscheduled = false;
  bool on_stream_lease = false;
  // The sender sends the whole flow blind: it never needs a grant.
  bool all_unscheduled = false;
  // The sender sends it under its window alone, never granted: background
  // the receiver treats as unmanaged traffic.
  bool window_only = false;
  // On its sender's background stream to this receiver: allocated and
  // granted with the stream, not on its own.
  bool background_stream = false;
  std::uint32_t criticality = 0;
  std::uint32_t version = 0;  // 24 bits
};

inline constexpr std::uint32_t kVersionMask = (1u << 24) - 1;

inline void put_semantics(Packet& p, const Semantics& s) {
  p.words[0] = static_cast<std::uint64_t>(s.no_bubble_ps);
  p.words[1] = s.size_bytes;
  p.words[2] = s.dependency;
  p.words[3] = (s.urgent ? 1u : 0u) | (s.unscheduled ? 2u : 0u) | (s.on_stream_lease ? 4u : 0u) |
               (s.all_unscheduled ? 8u : 0u) | (s.window_only ? 16u : 0u) |
               (s.background_stream ? 32u : 0u) |
               ((static_cast<std::uint64_t>(s.criticality) & 0xffffffffu) << 8) |
               (static_cast<std::uint64_t>(s.version & kVersionMask) << 40);
}

inline Semantics get_semantics(const Packet& p) {
  Semantics s;
  s.no_bubble_ps = static_cast<TimePs>(p.words[0]);
  s.size_bytes = p.words[1];
  s.dependency = p.words[2];
  s.urgent = (p.words[3] & 1u) != 0;
  s.unscheduled = (p.words[3] & 2u) != 0;
  s.on_stream_lease = (p.words[3] & 4u) != 0;
  s.all_unscheduled = (p.words[3] & 8u) != 0;
  s.window_only = (p.words[3] & 16u) != 0;
  s.background_stream = (p.words[3] & 32u) != 0;
  s.criticality = static_cast<std::uint32_t>(p.words[3] >> 8);
  s.version = static_cast<std::uint32_t>(p.words[3] >> 40) & kVersionMask;
  return s;
}

inline void put_grant(Packet& p, const core::Grant& g, std::uint32_t known_version) {
  p.words[0] = static_cast<std::uint64_t>(g.rate_bps);
  p.words[1] = static_cast<std::uint64_t>(g.valid_for_ps);
  p.words[2] = g.byte_cap;
  p.words[3] = g.epoch | (static_cast<std::uint64_t>(g.priority) << 32) |
               (static_cast<std::uint64_t>(known_version & kVersionMask) << 40);
}

// The grant as a TCP option on an ACK: kind and length (2 bytes), rate (8),
// lease (4), byte cap (8), epoch, priority and timestamp version (8): 30
// bytes, padded to a multiple of 4 as TCP options are (RFC 9293, 3.1).
inline constexpr std::uint32_t kGrantOptionBytes = 32;
inline constexpr std::uint64_t kGrantOnAckBit = std::uint64_t{1} << 63;

inline void put_grant_on_ack(Packet& ack, const core::Grant& g, std::uint32_t known_version) {
  put_grant(ack, g, known_version);
  ack.words[1] |= kGrantOnAckBit;
  ack.wire_bytes += kGrantOptionBytes;
}

inline bool ack_carries_grant(const Packet& ack) { return (ack.words[1] & kGrantOnAckBit) != 0; }

inline std::uint32_t grant_known_version(const Packet& p) {
  return static_cast<std::uint32_t>(p.words[3] >> 40) & kVersionMask;
}

inline core::Grant get_grant(const Packet& p) {
  core::Grant g;
  g.flow = p.flow_id;
  g.rate_bps = static_cast<double>(p.words[0]);
  g.valid_for_ps = static_cast<TimePs>(p.words[1] & ~kGrantOnAckBit);
  g.byte_cap = p.words[2];
  g.epoch = static_cast<std::uint32_t>(p.words[3]);
  g.priority = static_cast<std::uint8_t>((p.words[3] >> 32) & 0xff);
  return g;
}

inline void put_report(Packet& p, double achievable_bps) {
  p.words[0] = achievable_bps >= 1.8e19 ? std::numeric_limits<std::uint64_t>::max()
                                        : static_cast<std::uint64_t>(achievable_bps);
}

inline double get_report(const Packet& p) {
  return p.words[0] == std::numeric_limits<std::uint64_t>::max()
             ? std::numeric_limits<double>::infinity()
             : static_cast<double>(p.words[0]);
}

struct Announcement {
  TimePs no_bubble_ps = kTimeNever;
  std::uint64_t size_bytes = 0;
  std::uint64_t dependency = 0;
  TimePs starts_in_ps = 0;   // at most kMaxAnnounceLeadPs
  std::uint32_t number = 0;  // 24 bits
};

inline void put_announcement(Packet& p, const Announcement& a) {
  p.words[0] = static_cast<std::uint64_t>(a.no_bubble_ps);
  p.words[1] = a.size_bytes;
  p.words[2] = a.dependency;
  p.words[3] = static_cast<std::uint64_t>(a.starts_in_ps) |
               (static_cast<std::uint64_t>(a.number & kAnnouncementMask) << 40);
}

inline Announcement get_announcement(const Packet& p) {
  return {.no_bubble_ps = static_cast<TimePs>(p.words[0]),
          .size_bytes = p.words[1],
          .dependency = p.words[2],
          .starts_in_ps =
              static_cast<TimePs>(p.words[3] & static_cast<std::uint64_t>(kMaxAnnounceLeadPs)),
          .number = static_cast<std::uint32_t>(p.words[3] >> 40) & kAnnouncementMask};
}

// A planned grant is a grant with the announcement's number where a GRANT
// carries the timestamp version (put_grant's third argument).
inline std::uint32_t planned_grant_number(const Packet& p) { return grant_known_version(p); }

}  // namespace safs::safs_header
