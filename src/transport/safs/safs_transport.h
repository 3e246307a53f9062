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
#pragma once

#include <memory>
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

 protected:
  void on_flow_start(Flow& flow) override;
  SendGate send_gate(Flow& flow) override;
  void on_segment_sent(Flow& flow, Packet& packet) override;
  void on_segment_received(Flow& flow, const Packet& packet, bool first_copy) override;
  void on_receiver_complete(Flow& flow) override;
  void on_control(Flow& flow, const Packet& packet) override;
  void on_deadline_changed(Flow& flow) override;
  void on_sender_complete(Flow& flow) override;
  void send_meta(Flow& flow);
  // Receiver side: applies a timestamp unless an older version than known.
  bool newer_timestamp(core::FlowId id, std::uint32_t version);

 private:
  struct SenderState;
  class ReceiverHost;

  SenderState& sender(const Flow& flow) { return *senders_[spec_of(flow).id]; }
  safs_header::Semantics semantics(const Flow& flow, bool unscheduled) const;
  // Allocation is in link terms: payload plus per-packet overhead.
  std::uint64_t wire_bytes(std::uint64_t payload_bytes) const;
  core::SemanticFlow semantic_flow(const Flow& flow, const safs_header::Semantics& s) const;
  void send_grants(ReceiverHost& host, const std::vector<core::Grant>& grants);
  // Something changed at this receiver: reallocate after the batching window.
  void request_poll(ReceiverHost& host);
  void poll_receiver(ReceiverHost& host);
  void rebalance_uplink(int host);

  SafsConfig config_;
  std::vector<std::unique_ptr<SenderState>> senders_;      // by flow id
  std::vector<std::unique_ptr<ReceiverHost>> receivers_;   // by host
  std::vector<std::vector<std::uint32_t>> sending_flows_;  // by host: flows with a grant
  std::vector<std::uint32_t> known_version_;  // by flow id: timestamp version at the receiver
};

}  // namespace safs
