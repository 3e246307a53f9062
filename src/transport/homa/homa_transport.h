// Homa (Montazeri et al., SIGCOMM 2018; the Linux HomaModule): receiver-driven
// message transport with SRPT grants and switch priorities.
//
// Sender: the first `unsched_bytes` (RTTbytes) of every message go out blind,
// at an unscheduled priority (4..7) chosen by message length; the rest only as
// far as the receiver's GRANT offsets allow, at the priority the last GRANT
// named. Among its own messages the NIC always sends the one with the fewest
// bytes left to transmit (sender SRPT).
// Receiver: on every DATA arrival it re-ranks its incoming messages by bytes
// remaining, picks the top `overcommitment` (at most one per sender), gives
// them the scheduled levels 0..3 by rank (shifted down when fewer are active)
// and grants each one so that `grant_window` bytes are granted but not yet
// received, within a budget of `max_incoming` bytes incoming in total. A
// fraction of granted bytes goes to the oldest message (FIFO anti-starvation).
// Loss: a receiver that expects data and hears nothing for `resend_after`
// sends a RESEND for every gap and for the granted tail; a sender that may
// send nothing and hears nothing for `sender_probe` asks the receiver (the
// module's NEED_ACK). The receiver ACKs a complete message.
// As in the module, a message's sender state (outgoing, at its source host)
// and its receiver state (incoming, at its destination) are separate
// entries, each in its own table; the messages and their fields are in
// homa_header.h.
// Details, parameter sources and simplifications: docs/transports.md ("homa").
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "transport/common/flow_table.h"
#include "transport/common/retiring_flows.h"
#include "transport/homa/homa_header.h"
#include "transport/homa/homa_options.h"
#include "transport/transport.h"

namespace safs {

class HomaTransport final : public Transport {
 public:
  HomaTransport(TransportEnv& env, const HomaConfig& config);
  ~HomaTransport() override;

  void start_flow(const FlowSpec& flow) override;
  TransportStats stats() const override { return stats_; }
  std::uint64_t delivered_bytes(std::uint32_t flow_id) const override;
  FlowCounters flow_counters(std::uint32_t flow_id) const override;
  std::size_t live_flows() const override { return outgoing_.live(); }
  void free_spare_memory() override {
    outgoing_.free_spares();
    incoming_.free_spares();
  }
  // Homa schedules by size, not deadline.
  void update_deadline(std::uint32_t /*flow_id*/, TimePs /*deadline_ps*/) override {}

  // The values in effect (defaults resolved), for tests and tools.
  std::uint64_t rtt_bytes() const { return rtt_bytes_; }
  std::uint64_t unsched_bytes() const { return unsched_bytes_; }
  std::uint64_t grant_window_bytes() const { return grant_window_; }
  std::uint64_t max_incoming_bytes() const { return max_incoming_; }
  std::uint32_t overcommitment() const { return config_.overcommitment; }
  int max_sched_priority() const { return max_sched_prio_; }
  std::uint8_t unsched_priority(std::uint64_t length) const;
  // The receiver's grant offset for a message (0 before its first packet arrives).
  std::uint64_t receiver_granted_bytes(std::uint32_t flow_id) const;
  std::uint64_t fifo_grants() const { return fifo_grants_; }
  std::uint64_t resend_packets() const { return resends_; }       // non-empty RESENDs
  std::uint64_t resend_rounds() const { return resend_rounds_; }  // receiver timeouts that asked
  std::uint64_t sender_probes() const { return probes_; }         // NEED_ACKs sent
  std::uint64_t unknown_replies() const { return unknowns_; }     // UNKNOWNs sent

 private:
  struct MessageSide;
  struct OutgoingMessage;  // the sender's state of a message
  struct IncomingMessage;  // the receiver's state of a message
  class Host;

  std::uint64_t round_to_packets(std::uint64_t bytes) const;

  // Sender.
  void on_sender_packet(OutgoingMessage& m, const Packet& p);
  Packet* next_packet(Host& host);
  Packet* build_data(OutgoingMessage& m, std::uint64_t offset);
  bool sendable(const OutgoingMessage& m) const;
  void update_ready(OutgoingMessage& m);
  void queue_retransmit(OutgoingMessage& m, std::uint64_t begin, std::uint64_t end);
  void apply_grant(OutgoingMessage& m, std::uint64_t offset, std::uint8_t priority);
  void note_sender_activity(OutgoingMessage& m);
  void on_probe_timer(OutgoingMessage& m);

  // Receiver.
  void on_receiver_packet(Host& host, IncomingMessage& m, const Packet& p);
  void on_data(Host& host, IncomingMessage& m, const Packet& p);
  void schedule_grants(Host& host);
  bool fifo_grant(Host& host);
  void update_incoming(Host& host, IncomingMessage& m);
  void update_grantable(Host& host, IncomingMessage& m);
  bool expecting(const IncomingMessage& m) const;
  void arm_resend(IncomingMessage& m);
  int granted_level(const IncomingMessage& m, std::uint64_t offset) const;
  bool overdue(const Host& host, const IncomingMessage& m, int level, std::uint64_t end,
               bool gap) const;
  void on_resend_timer(IncomingMessage& m);
  int request_retransmission(const Host& host, IncomingMessage& m);
  void send_grant(IncomingMessage& m, std::uint8_t priority);
  void send_resend(IncomingMessage& m, std::uint64_t offset, std::uint64_t length);

  // Both: each arriving message goes to the side its type is addressed to.
  void on_packet(Host& host, Packet& p);
  // After a packet of message `id`: once the sender has its ACK and the
  // receiver the whole message, the message waits to be freed.
  void retire_if_done(std::uint32_t id);
  bool unreachable(std::uint32_t id) const;
  // A header-only message from one side of `m` to the other.
  Packet& new_control(const OutgoingMessage& m, homa_header::Type type);
  Packet& new_control(const IncomingMessage& m, homa_header::Type type);
  void send_control(MessageSide& from, Packet& p);

  TransportEnv env_;
  HomaConfig config_;
  std::uint64_t rtt_bytes_ = 0;
  std::uint64_t unsched_bytes_ = 0;
  std::uint64_t grant_window_ = 0;
  std::uint64_t max_incoming_ = 0;
  std::int64_t grant_nonfifo_ = 0;  // SRPT-granted bytes between FIFO grants; 0: none
  int max_sched_prio_ = 3;
  std::vector<std::unique_ptr<Host>> hosts_;
  FlowTable<OutgoingMessage> outgoing_;
  FlowTable<IncomingMessage> incoming_;
  RetiringFlows retiring_;
  bool side_finished_ = false;            // the packet being handled ended one side of its message
  std::vector<IncomingMessage*> active_;  // scratch for schedule_grants
  std::vector<int> active_senders_;
  TransportStats stats_;
  std::uint64_t fifo_grants_ = 0;
  std::uint64_t resends_ = 0;
  std::uint64_t resend_rounds_ = 0;
  std::uint64_t probes_ = 0;
  std::uint64_t unknowns_ = 0;
};

}  // namespace safs
