// SAFS at one host as a receiver: a core::ReceiverScheduler fed by the
// semantics every DATA and META carries and the senders' REPORTs, its poll
// timer, and the grants it sends. It handles META and REPORT (DATA comes
// through the window transport's receiver).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <utility>
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
        timer_(transport.env().sim, [this] { poll(); }),
        carrier_timer_(transport.env().sim, [this] { send_overdue_grants(); }) {}

  void on_start(ReceiverFlow& flow);
  void on_segment(ReceiverFlow& flow, const Packet& packet, bool first_copy);
  void on_complete(ReceiverFlow& flow);
  void on_meta(ReceiverFlow& flow, const Packet& packet);
  void on_report(ReceiverFlow& flow, const Packet& packet);
  // A sender announced a transfer (ANNOUNCE, announce_ahead).
  void on_announce(const Packet& packet);
  // The ACK of a data segment of `flow` is about to leave: a grant held
  // for the flow rides it (grant_carrier_wait_ps).
  void on_ack_built(ReceiverFlow& flow, Packet& ack);
  const core::ReceiverScheduler& scheduler() const { return scheduler_; }
  std::uint64_t grants_on_acks() const { return grants_on_acks_; }
  std::uint64_t grants_after_waiting() const { return grants_after_waiting_; }
  std::uint64_t decreases_held() const { return decreases_held_; }
  std::uint64_t held_grants_not_sent() const { return held_grants_not_sent_; }
  TimePs longest_hold_ps() const { return longest_hold_ps_; }

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
  // Grants on ACKs: how long a grant for `flow` may wait for one of its
  // ACKs (kTimeNever: it goes now, alone), and the hold itself.
  TimePs ack_wait_ps(const ReceiverFlow& flow, TimePs now) const;
  // A grant's one-way trip with a full packet ahead of it at every hop.
  TimePs worst_grant_flight_ps(const ReceiverFlow& flow) const;
  void hold_for_ack(ReceiverFlow& flow, const core::Grant& grant, TimePs now, TimePs until_ps);
  void send_grant_packet(ReceiverFlow& flow, const core::Grant& grant);
  // Held grants whose wait is over go as GRANTs.
  void send_overdue_grants();
  void observe_grant(std::uint32_t flow, double rate_bps) const;
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
  // Grants on ACKs: (deadline, flow) of held grants, earliest on top (a
  // vector-backed heap: no allocation once grown). An entry whose grant
  // went on an ACK meanwhile, or was held again to an earlier deadline, is
  // skipped.
  Timer carrier_timer_;
  std::priority_queue<std::pair<TimePs, std::uint32_t>,
                      std::vector<std::pair<TimePs, std::uint32_t>>, std::greater<>>
      held_;
  bool data_arriving_ = false;  // between a segment's arrival and its ACK
  std::uint32_t arriving_flow_ = 0;
  std::uint64_t grants_on_acks_ = 0;
  std::uint64_t grants_after_waiting_ = 0;  // held, then sent alone
  std::uint64_t decreases_held_ = 0;        // decreases held for a later ACK
  std::uint64_t held_grants_not_sent_ = 0;  // replaced by a newer grant before leaving
  TimePs longest_hold_ps_ = 0;              // the longest any grant was allowed to wait
  struct StreamBytes {
    std::uint64_t remaining_bytes = 0;  // wire bytes still to come, of all its flows
    std::size_t flows = 0;
  };
  std::map<std::uint32_t, StreamBytes> background_streams_;  // by sender host
};

}  // namespace safs
