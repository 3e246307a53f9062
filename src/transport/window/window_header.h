// The window transport's messages (Packet::message_type).
//
// DATA (sender to receiver): seq = byte offset, payload_bytes, sent_at_ps.
// ACK (receiver to sender), one per DATA: ack = cumulative point (next byte
// expected), ece = the DATA's CE bit, echo_ps = the DATA's sent_at_ps. Its
// header words are the derived transport's (on_ack_built, on_ack_arrived).
// A transport built on WindowTransport numbers its own messages from
// kFirstDerivedType (SAFS: safs_header.h).
#pragma once

#include <cstdint>

namespace safs::window_header {

enum Type : std::uint8_t {
  kData = 0,
  kAck = 1,
  kFirstDerivedType = 2,
};

}  // namespace safs::window_header
