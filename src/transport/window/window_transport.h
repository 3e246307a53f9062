// Window-based reliable transport in the style of Linux TCP: the one sender
// and receiver mechanism under every window-based protocol here. Reno and
// DCTCP use it as it is, with their congestion response plugged in; SAFS
// derives from it and adds pacing, priorities and grants through the hooks.
//
// Sender: byte sequence numbers over fixed MTU-sized segments, slow start and
// congestion avoidance with byte counting (RFC 3465), growth only while the
// window is the limit (RFC 7661), NewReno fast retransmit/recovery on three
// duplicate ACKs (RFC 6582), and a retransmission timeout per RFC 6298 with
// exponential backoff (go-back-N after a timeout).
// Receiver: ACKs every segment (no delayed ACKs, so DCTCP's CE echo needs no
// state machine) with the cumulative point, the CE bit as ECE, and the
// segment's send time for RTT samples (like the TCP timestamp option, so
// retransmissions give valid samples too).
// Each host's NIC serves its sending flows by priority (the level each flow
// last sent at), round-robin within a level, one segment at a time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "engine/ring_queue.h"
#include "engine/timer.h"
#include "transport/common/flow_table.h"
#include "transport/common/segment_tracker.h"
#include "transport/transport.h"
#include "transport/window/congestion_control.h"
#include "transport/window/window_options.h"

namespace safs {

class WindowTransport : public Transport {
 public:
  WindowTransport(TransportEnv& env, const WindowConfig& config,
                  std::unique_ptr<CongestionControl> control);
  ~WindowTransport() override;

  void start_flow(const FlowSpec& flow) override;
  TransportStats stats() const override { return stats_; }
  std::uint64_t delivered_bytes(std::uint32_t flow_id) const override;
  FlowCounters flow_counters(std::uint32_t flow_id) const override;
  void update_deadline(std::uint32_t flow_id, TimePs deadline_ps) override;

 protected:
  struct Flow;

  // Whether a flow whose window is open may send now, and at what priority.
  struct SendGate {
    bool allowed = true;
    std::uint8_t priority = 0;
    TimePs retry_at_ps = kTimeNever;  // when not allowed: when to ask again (kTimeNever: wait
                                      // for make_ready())
  };

  // Hooks for derived transports; the defaults are plain TCP.
  virtual void on_flow_start(Flow& /*flow*/) {}
  virtual SendGate send_gate(Flow& /*flow*/) { return {true, config_.data_priority}; }
  // A data segment is about to leave (fill header words, account pacing).
  virtual void on_segment_sent(Flow& /*flow*/, Packet& /*packet*/) {}
  // Receiver side: a data segment arrived (first_copy: not a duplicate).
  virtual void on_segment_received(Flow& /*flow*/, const Packet& /*packet*/, bool /*first_copy*/) {}
  virtual void on_receiver_complete(Flow& /*flow*/) {}
  // Sender side: every byte of the flow has been acknowledged.
  virtual void on_sender_complete(Flow& /*flow*/) {}
  // A packet of a kind other than data and ACK (grants, metadata, reports).
  virtual void on_control(Flow& /*flow*/, const Packet& /*packet*/) {}

  // The deadline moved (the spec is already updated when this runs).
  virtual void on_deadline_changed(Flow& /*flow*/) {}

  // Queues the flow at its host's NIC if its window lets it send.
  void make_ready(Flow& flow);
  // A control packet of `flow` toward its sender (to_sender) or its receiver,
  // with header-only size; the caller fills it and passes it to send_control().
  Packet& new_control(Flow& flow, PacketKind kind, bool to_sender, std::uint8_t priority);
  void send_control(Packet& packet);
  Flow* flow_for(std::uint32_t id) { return flows_.find(id); }
  const FlowSpec& spec_of(const Flow& flow) const;
  std::uint64_t bytes_received(const Flow& flow) const;
  TransportEnv& env() { return env_; }
  const TransportEnv& env() const { return env_; }
  TransportStats& mutable_stats() { return stats_; }

 private:
  class Host;

  void on_packet(Packet& packet);
  void on_data(Flow& flow, Packet& data);
  void on_ack(Flow& flow, const Packet& ack);
  void on_new_ack(Flow& flow, std::uint64_t ack);
  void on_duplicate_ack(Flow& flow);
  void on_timeout(Flow& flow);
  void grow_window(Flow& flow, std::uint64_t acked_bytes);
  bool window_allows(const Flow& flow) const;
  Packet* next_segment(Host& host);
  Packet* build_segment(Flow& flow, std::uint8_t priority);
  std::uint32_t segment_bytes(const Flow& flow, std::uint64_t seq) const;

  TransportEnv env_;
  WindowConfig config_;
  std::unique_ptr<CongestionControl> control_;
  std::vector<std::unique_ptr<Host>> hosts_;
  FlowTable<Flow> flows_;
  TransportStats stats_;
};

// The per-flow state of the window mechanism, visible to derived transports.
struct WindowTransport::Flow {
  FlowSpec spec;
  Route data_route;  // sender -> receiver
  Route ack_route;   // receiver -> sender

  // Sender (byte offsets).
  std::uint64_t snd_una = 0;
  std::uint64_t snd_nxt = 0;
  std::uint64_t high_water = 0;  // highest byte ever sent + 1
  std::uint64_t recover = 0;     // NewReno: snd_nxt when recovery began
  std::uint32_t dupacks = 0;
  bool in_recovery = false;
  bool retransmit_pending = false;  // resend the segment at snd_una next
  std::uint64_t cwr_end = 0;        // no further ECN cut until snd_una passes this
  bool in_ready_queue = false;
  std::uint8_t queue_priority = 0;  // the NIC level it waits at
  CcState cc;
  TimePs srtt_ps = 0;
  TimePs rttvar_ps = 0;
  TimePs rto_ps = 0;
  std::unique_ptr<Timer> rto_timer;
  std::unique_ptr<Timer> retry_timer;  // send_gate asked to retry later

  FlowCounters counters;

  // Receiver.
  SegmentTracker received;
  bool complete = false;

  std::uint64_t in_flight() const { return snd_nxt - snd_una; }
  bool sender_done() const { return snd_una >= spec.size_bytes; }
};

}  // namespace safs
