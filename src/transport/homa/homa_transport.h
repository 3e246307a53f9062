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
// Details, parameter sources and simplifications: src/transport/homa/README.md.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

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
  struct Message;
  class Host;

  Message* message(std::uint32_t id) const { return id < by_id_.size() ? by_id_[id] : nullptr; }
  std::uint64_t round_to_packets(std::uint64_t bytes) const;

  // Sender.
  Packet* next_packet(Host& host);
  Packet* build_data(Message& m, std::uint64_t offset);
  bool sendable(const Message& m) const;
  void update_ready(Message& m);
  void queue_retransmit(Message& m, std::uint64_t begin, std::uint64_t end);
  void apply_grant(Message& m, std::uint64_t offset, std::uint8_t priority);
  void note_sender_activity(Message& m);
  void on_probe_timer(Message& m);

  // Receiver.
  void on_data(Host& host, Message& m, const Packet& p);
  void schedule_grants(Host& host);
  bool fifo_grant(Host& host);
  void update_incoming(Host& host, Message& m);
  void update_grantable(Host& host, Message& m);
  bool expecting(const Message& m) const;
  void arm_resend(Message& m);
  int granted_level(const Message& m, std::uint64_t offset) const;
  bool overdue(const Host& host, const Message& m, int level, std::uint64_t end, bool gap) const;
  void on_resend_timer(Message& m);
  int request_retransmission(const Host& host, Message& m);

  // Both.
  void on_packet(Host& host, Packet& p);
  Packet& new_control(Message& m, PacketKind kind, bool to_sender);
  void send_control(Message& m, Packet& p);
  void send_grant(Message& m, std::uint8_t priority);
  void send_resend(Message& m, std::uint64_t offset, std::uint64_t length);

  TransportEnv env_;
  HomaConfig config_;
  std::uint64_t rtt_bytes_ = 0;
  std::uint64_t unsched_bytes_ = 0;
  std::uint64_t grant_window_ = 0;
  std::uint64_t max_incoming_ = 0;
  std::int64_t grant_nonfifo_ = 0;  // SRPT-granted bytes between FIFO grants; 0: none
  int max_sched_prio_ = 3;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::deque<Message> messages_;  // stable addresses: packets point at their routes
  std::vector<Message*> by_id_;
  std::vector<Message*> active_;  // scratch for schedule_grants
  std::vector<int> active_senders_;
  TransportStats stats_;
  std::uint64_t fifo_grants_ = 0;
  std::uint64_t resends_ = 0;
  std::uint64_t resend_rounds_ = 0;
  std::uint64_t probes_ = 0;
  std::uint64_t unknowns_ = 0;
};

}  // namespace safs
