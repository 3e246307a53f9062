// SAFS at one host as a receiver: a core::ReceiverScheduler fed by the
// semantics every DATA and META carries and the senders' REPORTs, its poll
// timer, and the grants it sends. It handles META and REPORT (DATA comes
// through the window transport's receiver).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/receiver_scheduler.h"
#include "engine/timer.h"
#include "transport/safs/safs_header.h"
#include "transport/safs/safs_transport.h"

namespace safs {

class SafsTransport::ReceiverAgent {
 public:
  ReceiverAgent(SafsTransport& transport, int host, const core::ReceiverConfig& config)
      : transport_(transport),
        host_(host),
        scheduler_(config),
        timer_(transport.env().sim, [this] { poll(); }) {}

  void on_start(ReceiverFlow& flow);
  void on_segment(ReceiverFlow& flow, const Packet& packet, bool first_copy);
  void on_complete(ReceiverFlow& flow);
  void on_meta(ReceiverFlow& flow, const Packet& packet);
  void on_report(ReceiverFlow& flow, const Packet& packet);
  // A sender announced a transfer (ANNOUNCE, announce_ahead).
  void on_announce(const Packet& packet);
  const core::ReceiverScheduler& scheduler() const { return scheduler_; }

 private:
  struct FlowState;  // a flow's SAFS receiver state, in its ReceiverFlow's extension

  static FlowState& state(const ReceiverFlow& flow);
  // Applies a timestamp unless it is of an older version than the one known.
  static bool newer_timestamp(ReceiverFlow& flow, std::uint32_t version);
  bool ignored(const safs_header::Semantics& s) const;
  // Allocation is in link terms: payload plus per-packet overhead.
  std::uint64_t wire_bytes(std::uint64_t payload_bytes) const;
  core::SemanticFlow semantic_flow(const ReceiverFlow& flow, const safs_header::Semantics& s) const;
  // Something changed: reallocate after the batching window.
  void on_change();
  void poll();
  void send_grants(const std::vector<core::Grant>& grants);
  // A grant that names no flow (a planned transfer's, a background
  // stream's), to the sender's host; `tag` rides where a GRANT carries the
  // timestamp version (a planned grant's announcement number).
  void send_host_grant(int sender, std::uint8_t message_type, const core::Grant& grant,
                       std::uint32_t tag);
  // Background streams (background_streams): a sender's background flows
  // here that need grants are one flow to the scheduler, whose remaining
  // bytes are theirs together.
  void on_stream_segment(ReceiverFlow& flow, std::uint64_t remaining_bytes);
  void on_stream_member_complete(ReceiverFlow& flow);

  SafsTransport& transport_;
  int host_;
  core::ReceiverScheduler scheduler_;
  Timer timer_;
  struct StreamBytes {
    std::uint64_t remaining_bytes = 0;  // wire bytes still to come, of all its flows
    std::size_t flows = 0;
  };
  std::map<std::uint32_t, StreamBytes> background_streams_;  // by sender host
};

}  // namespace safs
