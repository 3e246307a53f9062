// Window-based reliable transport in the style of Linux TCP: the one sender
// and receiver mechanism under every window-based protocol here. Reno and
// DCTCP use it as it is, with their congestion response plugged in; SAFS
// derives from it and adds pacing, priorities and grants through the hooks.
//
// Sender: byte sequence numbers over fixed MTU-sized segments, slow start and
// congestion avoidance with byte counting (RFC 3465), growth only while the
// window is the limit (RFC 7661, as Linux tests it), NewReno fast
// retransmit/recovery on three duplicate ACKs (RFC 6582, the impatient
// variant), window reductions paced by PRR (RFC 6937), and a retransmission
// timeout per RFC 6298 with exponential backoff (go-back-N after a timeout).
// Linux's congestion states (Open, CWR, Recovery, Loss) order it all; each
// departure from classic NewReno is a knob (window_options.cc).
// Receiver: ACKs every segment (no delayed ACKs, so DCTCP's CE echo needs no
// state machine) with the cumulative point, the CE bit as ECE, and the
// segment's send time for RTT samples (like the TCP timestamp option, so
// retransmissions give valid samples too).
// Each host's NIC serves its sending flows by priority (the level each flow
// last sent at), round-robin within a level, one segment at a time.
//
// The two ends of a flow keep their own state, as htsim's sources and sinks
// and the Homa module's outgoing and incoming messages: a SenderFlow in the
// sender table (at the flow's source host) and a ReceiverFlow in the
// receiver table (at its destination), both keyed by flow id. Each arriving
// message goes to the side its type names (window_header.h): DATA to the
// receiver, ACK to the sender; a derived transport registers its own message
// types with a side and keeps its own per-flow state in each side's
// `extension` slot.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <type_traits>
#include <vector>

#include "engine/ring_queue.h"
#include "engine/timer.h"
#include "transport/common/flow_table.h"
#include "transport/common/retiring_flows.h"
#include "transport/common/segment_tracker.h"
#include "transport/common/spare_blocks.h"
#include "transport/transport.h"
#include "transport/window/congestion_control.h"
#include "transport/window/prr.h"
#include "transport/window/sack_scoreboard.h"
#include "transport/window/window_header.h"
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
  std::size_t live_flows() const override { return senders_.live(); }
  void update_deadline(std::uint32_t flow_id, TimePs deadline_ps) override;
  void free_spare_memory() override;

 protected:
  struct FlowSide;
  struct SenderFlow;
  struct ReceiverFlow;

  // A derived transport's own state of one side of a flow, kept in that
  // side's entry (SenderFlow::extension, ReceiverFlow::extension).
  struct FlowExtension {
    virtual ~FlowExtension() = default;
  };
  // Frees an extension into the spare blocks it came from, for the next
  // flow's: each flow makes one per side, millions in a long run. (One made
  // with plain `new`, without blocks, is deleted.)
  struct ExtensionDeleter {
    SpareBlocks* blocks = nullptr;
    void operator()(FlowExtension* extension) const {
      if (blocks == nullptr) {
        delete extension;
        return;
      }
      void* block = dynamic_cast<void*>(extension);  // the whole T, where its block starts
      std::destroy_at(extension);
      blocks->give_back(block);
    }
  };
  using ExtensionPtr = std::unique_ptr<FlowExtension, ExtensionDeleter>;

  // Linux's congestion states (tcp_set_ca_state), Disorder folded into Open.
  enum class CaState : std::uint8_t {
    kOpen,      // growing
    kCwr,       // ECN cut under way, until snd_una passes cwr_end
    kRecovery,  // fast recovery, until snd_una reaches recover
    kLoss,      // after a timeout, until snd_una reaches recover
  };

  // Which side of a flow a message type is addressed to (kHost: to the
  // host's transport, not a flow: on_host_message).
  enum class Side : std::uint8_t { kNone, kSender, kReceiver, kHost };

  // Whether a flow whose window is open may send now, and at what priority.
  struct SendGate {
    bool allowed = true;
    std::uint8_t priority = 0;
    TimePs retry_at_ps = kTimeNever;  // when not allowed: when to ask again (kTimeNever: wait
                                      // for make_ready())
  };

  // Hooks for derived transports; the defaults are plain TCP.
  // A flow starts: each side's entry is new (set its extension here).
  virtual void on_sender_start(SenderFlow& /*flow*/) {}
  virtual void on_receiver_start(ReceiverFlow& /*flow*/) {}
  virtual SendGate send_gate(SenderFlow& flow);  // open, at the flow's class priority
  // A data segment is about to leave (fill header words, account pacing).
  virtual void on_segment_sent(SenderFlow& /*flow*/, Packet& /*packet*/) {}
  // A data segment arrived (first_copy: not a duplicate).
  virtual void on_segment_received(ReceiverFlow& /*flow*/, const Packet& /*packet*/,
                                   bool /*first_copy*/) {}
  virtual void on_receiver_complete(ReceiverFlow& /*flow*/) {}
  // The ACK a data segment triggers is about to leave (it may carry the
  // derived transport's header words: they are free on an ACK).
  virtual void on_ack_built(ReceiverFlow& /*flow*/, Packet& /*ack*/) {}
  // An ACK arrived at a flow still sending, before the window reads it.
  virtual void on_ack_arrived(SenderFlow& /*flow*/, const Packet& /*ack*/) {}
  // Every byte of the flow has been acknowledged.
  virtual void on_sender_complete(SenderFlow& /*flow*/) {}
  // A message of a type registered with handle_at() arrived at that side.
  virtual void on_sender_message(SenderFlow& /*flow*/, const Packet& /*packet*/) {}
  virtual void on_receiver_message(ReceiverFlow& /*flow*/, const Packet& /*packet*/) {}
  // A message of a type registered at Side::kHost arrived at its host.
  virtual void on_host_message(const Packet& /*packet*/) {}
  // The deadline moved (the spec is already updated when this runs).
  virtual void on_deadline_changed(SenderFlow& /*flow*/) {}
  // Both ends are done: may their entries be freed, as far as the derived
  // transport's own references to them go?
  virtual bool extension_idle(const SenderFlow& /*flow*/) const { return true; }
  // The priority of the ACK that `data` triggers: the flow's ACK class.
  virtual std::uint8_t ack_priority(const ReceiverFlow& flow, const Packet& data) const;

  // The flow's class priority: urgent_priority for urgent flows when set,
  // else data_priority (ACKs: ack_priority).
  std::uint8_t class_priority(const FlowSpec& spec) const {
    return urgent_class(spec) ? config_.urgent_priority : config_.data_priority;
  }
  std::uint8_t ack_class_priority(const FlowSpec& spec) const {
    return urgent_class(spec) ? config_.urgent_priority : config_.ack_priority;
  }
  bool urgent_class(const FlowSpec& spec) const {
    return config_.urgent_priority > 0 && spec.flow_class == FlowClass::kUrgent;
  }

  // Messages of `type` go to `side` (on_sender_message, on_receiver_message).
  void handle_at(std::uint8_t type, Side side) { side_of_type_[type] = side; }
  // Queues the flow at its host's NIC if its window lets it send.
  void make_ready(SenderFlow& flow);
  // A control packet from one side of a flow to the other, header-only; the
  // caller fills it and passes it to send_control().
  Packet& new_control(const SenderFlow& flow, std::uint8_t message_type, std::uint8_t priority);
  Packet& new_control(const ReceiverFlow& flow, std::uint8_t message_type, std::uint8_t priority);
  void send_control(FlowSide& from, Packet& packet);
  SenderFlow* sender_flow(std::uint32_t id) const { return senders_.find(id); }
  ReceiverFlow* receiver_flow(std::uint32_t id) const { return receivers_.find(id); }
  TransportEnv& env() { return env_; }
  const TransportEnv& env() const { return env_; }
  TransportStats& mutable_stats() { return stats_; }
  // A new, value-initialised extension of type T, in reused memory.
  template <typename T>
  ExtensionPtr make_extension() {
    static_assert(std::is_nothrow_default_constructible_v<T>);
    static_assert(alignof(T) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
    SpareBlocks& blocks = extension_blocks(sizeof(T));
    return ExtensionPtr(std::construct_at(static_cast<T*>(blocks.take())), {&blocks});
  }

 private:
  class Host;

  void on_packet(Packet& packet);
  // The spare blocks for extensions of `bytes`, made on first use.
  SpareBlocks& extension_blocks(std::size_t bytes);
  // After a packet of flow `id`: once both ends are done it waits to be freed.
  void retire_if_done(std::uint32_t id);
  bool unreachable(std::uint32_t id) const;
  void on_data(ReceiverFlow& flow, Packet& data);
  void on_ack(SenderFlow& flow, const Packet& ack);
  // What an ACK that moves snd_una did.
  struct NewAck {
    std::uint64_t delivered_bytes;  // newly delivered, not SACKed before
    bool partial;                   // in recovery, short of recover: a new hole
  };
  NewAck on_new_ack(SenderFlow& flow, std::uint64_t ack);
  // Each returns the bytes the ACK reports newly delivered.
  std::uint64_t on_sack(SenderFlow& flow, std::uint64_t seq);
  std::uint64_t on_duplicate_ack(SenderFlow& flow);
  void enter_recovery(SenderFlow& flow);
  std::uint32_t dupthresh(const SenderFlow& flow) const;
  bool has_retransmission(const SenderFlow& flow) const;
  std::uint64_t retransmission_seq(const SenderFlow& flow) const;
  void on_echo(SenderFlow& flow);
  void on_timeout(SenderFlow& flow);
  // The loss timer fired: a tail loss probe's or the RTO's.
  void on_loss_timer(SenderFlow& flow);
  // Tail loss probes (WindowConfig::tail_loss_probe, RFC 8985 section 7).
  bool probe_allowed(const SenderFlow& flow) const;
  // Arms the loss timer from now: for a probe after 2 SRTT if one is
  // allowed, else for the RTO.
  void arm_loss_timer(SenderFlow& flow);
  void send_probe(SenderFlow& flow);
  // An ACK arrived while a probe is out: once it reports the probe's
  // segment, what is still missing below it is lost.
  void check_probe(SenderFlow& flow, const Packet& ack);
  void enter_reduction(SenderFlow& flow, CaState state);
  void grow_window(SenderFlow& flow, std::uint64_t acked_bytes);
  bool cwnd_limited(const SenderFlow& flow) const;
  std::uint64_t pipe_bytes(const SenderFlow& flow) const;
  bool window_allows(const SenderFlow& flow) const;
  Packet* next_segment(Host& host);
  Packet* build_segment(SenderFlow& flow, std::uint8_t priority);
  std::uint32_t segment_bytes(const SenderFlow& flow, std::uint64_t seq) const;

  TransportEnv env_;
  WindowConfig config_;
  std::unique_ptr<CongestionControl> control_;
  std::vector<std::unique_ptr<Host>> hosts_;
  // Memory of freed extensions, one list per size (a transport has a type or
  // two); declared before the flow tables so that it outlives the
  // extensions they hold.
  std::vector<std::unique_ptr<SpareBlocks>> extension_blocks_;
  FlowTable<SenderFlow> senders_;
  FlowTable<ReceiverFlow> receivers_;
  RetiringFlows retiring_;
  bool side_finished_ = false;  // the packet being handled ended one side of its flow
  std::array<Side, 256> side_of_type_{};
  TransportStats stats_;
};

// What both sides' entries hold.
struct WindowTransport::FlowSide {
  FlowSpec spec;
  std::uint64_t control_packets = 0;  // scheduling control this side sent (not ACKs)
  ExtensionPtr extension;

  template <typename T>
  T& ext() const {
    return static_cast<T&>(*extension);
  }
};

// The sender's state of a flow, at its source host.
struct WindowTransport::SenderFlow : FlowSide {
  Route data_route;        // sender -> receiver
  TimePs base_rtt_ps = 0;  // a full segment there and its ACK back, unloaded

  // Byte offsets.
  std::uint64_t snd_una = 0;
  std::uint64_t snd_nxt = 0;
  std::uint64_t high_water = 0;  // highest byte ever sent + 1
  CaState ca_state = CaState::kOpen;
  std::uint64_t recover = 0;  // snd_nxt when recovery or the timeout began
  std::uint64_t cwr_end = 0;  // snd_nxt when the ECN cut began
  std::uint32_t dupacks = 0;
  // Bytes above snd_una that duplicate ACKs say arrived (Linux's sacked_out
  // without SACK, in bytes; prr only).
  std::uint64_t sacked_bytes = 0;
  SackScoreboard scoreboard;  // sack only
  PrrState prr;
  bool partial_ack_seen = false;    // in this recovery (impatient_rto)
  bool retransmit_pending = false;  // resend the segment at snd_una next
  bool in_ready_queue = false;
  std::uint8_t queue_priority = 0;  // the NIC level it waits at
  CcState cc;
  TimePs srtt_ps = 0;
  TimePs rttvar_ps = 0;
  TimePs rto_ps = 0;
  // Timers live in the entry (built at the flow's start, when their callbacks
  // can name it), not in blocks of their own.
  std::optional<Timer> rto_timer;  // the loss timer: the RTO's, or a probe's
  // Tail loss probe (tail_loss_probe): the loss timer is set for a probe,
  // and the segment a probe resent while its ACK is awaited.
  bool loss_timer_probes = false;
  bool probe_pending = false;  // the probe waits for the NIC
  std::uint64_t probe_seq = SackScoreboard::kNoSegment;
  std::optional<Timer> retry_timer;  // send_gate asked to retry later

  std::uint64_t data_packets = 0;  // sent, including retransmissions
  bool retiring = false;           // both ends done: waits in retiring_ to be freed

  std::uint64_t in_flight() const { return snd_nxt - snd_una; }
  bool reducing() const { return ca_state == CaState::kCwr || ca_state == CaState::kRecovery; }
  bool done() const { return snd_una >= spec.size_bytes; }
};

// The receiver's state of a flow, at its destination host.
struct WindowTransport::ReceiverFlow : FlowSide {
  Route reverse_route;  // receiver -> sender
  SegmentTracker received;
  bool complete = false;
};

}  // namespace safs
