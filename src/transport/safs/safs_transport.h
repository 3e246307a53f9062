// SAFS in the simulator: the window mechanism (DCTCP underneath, so fabric
// congestion the receiver cannot see is still handled by ECN) plus the SAFS
// core's receiver-driven rate grants.
//
// Sender: the first bytes of a flow (about one BDP) go out unscheduled at a
// high priority, every packet carrying the flow's semantics. After that the
// flow is paced at its granted rate, at the grant's priority, and never
// faster than its congestion window allows. A sender whose uplink is asked
// for more than it can carry serves its flows in slack order and reports to
// each receiver what its flow can actually get. Without a valid grant (lost,
// expired) a flow falls back to the window alone at the lowest priority.
// Receiver: one core::ReceiverScheduler per host turns the flows it hears of
// into safe allocations and grants, sent at the top priority.
//
// Each host runs two agents, one per side: a sender agent (send gate, the
// grants its flows hold, its uplink's share among them; handles GRANT) and a
// receiver agent (the scheduler, its poll timer, the grants it sends;
// handles the semantics on DATA, META and REPORT). A flow's SAFS state sits
// in each side's entry of the window transport (SafsSender, SafsReceiver).
#pragma once

#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "core/grant.h"
#include "core/receiver_scheduler.h"
#include "transport/safs/safs_header.h"
#include "transport/safs/safs_options.h"
#include "transport/window/window_transport.h"

namespace safs {

class SafsTransport final : public WindowTransport {
 public:
  SafsTransport(TransportEnv& env, const WindowConfig& window, const SafsConfig& config,
                std::unique_ptr<CongestionControl> control);
  ~SafsTransport() override;

  // With announce_ahead, the sender tells the receiver of a transfer to come
  // (docs/safs.md, "Transfers announced ahead").
  void announce_flow(const FlowSpec& planned) override;
  // With announce_ahead, what the receivers made of the announcements
  // (core::ReceiverScheduler's counts, summed over hosts).
  std::vector<MechanismCount> mechanism_stats() const override;

 private:
  class SenderAgent;
  class ReceiverAgent;

  // Each hook goes to the agent of the side it concerns.
  void on_sender_start(SenderFlow& flow) override;
  SendGate send_gate(SenderFlow& flow) override;
  void on_segment_sent(SenderFlow& flow, Packet& packet) override;
  void on_deadline_changed(SenderFlow& flow) override;
  void on_sender_complete(SenderFlow& flow) override;
  void on_sender_message(SenderFlow& flow, const Packet& packet) override;
  void on_receiver_start(ReceiverFlow& flow) override;
  void on_segment_received(ReceiverFlow& flow, const Packet& packet, bool first_copy) override;
  void on_receiver_complete(ReceiverFlow& flow) override;
  void on_receiver_message(ReceiverFlow& flow, const Packet& packet) override;
  // Grants on ACKs (grant_carrier_wait_ps): the receiver puts a held grant
  // on the ACK, the sender takes it off.
  void on_ack_built(ReceiverFlow& flow, Packet& ack) override;
  void on_ack_arrived(SenderFlow& flow, const Packet& ack) override;
  void on_host_message(const Packet& packet) override;
  bool extension_idle(const SenderFlow& flow) const override;
  // An ACK rides at the priority of the data it acknowledges (at least its
  // flow's ACK class). A host's downlink also carries the ACKs of the flows
  // it sends, which its receiver does not allocate; at the lowest level,
  // below the background it grants itself nearly all of that downlink, an
  // urgent flow's ACKs would wait behind that background, its RTT would grow
  // with the queue and its retransmission timer would fire again and again.
  std::uint8_t ack_priority(const ReceiverFlow& flow, const Packet& data) const override;

  // A control packet from host `from` to host `to` about no flow (ANNOUNCE,
  // PLANNED_GRANT), to fill and pass to send_host_message().
  Packet& new_host_message(int from, int to, std::uint8_t message_type);
  void send_host_message(Packet& packet);
  // The route between two hosts that host messages take (kept: packets
  // point at it).
  const Route& host_route(int from, int to);

  SenderAgent& sender_agent(const SenderFlow& flow) const { return *senders_[flow.spec.src]; }
  ReceiverAgent& receiver_agent(const ReceiverFlow& flow) { return *receivers_[flow.spec.dst]; }

  SafsConfig config_;
  std::vector<std::unique_ptr<SenderAgent>> senders_;      // by host
  std::vector<std::unique_ptr<ReceiverAgent>> receivers_;  // by host
  std::map<std::pair<int, int>, Route> host_routes_;       // (from, to): only pairs that announce
};

}  // namespace safs
