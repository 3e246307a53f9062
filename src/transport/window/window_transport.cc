#include "transport/window/window_transport.h"

#include <algorithm>
#include <bit>

#include "transport/common/host_endpoints.h"
#include "transport/common/new_packet.h"

namespace safs {

class WindowTransport::Host final : public PacketSink, public PacketSource {
 public:
  Host(WindowTransport& transport, int id) : transport_(transport), id_(id) {}
  void receive(Packet& packet) override { transport_.on_packet(packet); }
  Packet* pull_packet() override { return transport_.next_segment(*this); }
  // A flow joins `ready` through make_ready, which wakes the NIC.
  bool idle() const override { return ready_mask == 0; }

  // Flows that may send, one round-robin queue per priority level.
  std::array<RingQueue<SenderFlow*>, kNumPriorities> ready;
  std::uint32_t ready_mask = 0;  // bit i: level i is not empty
  int id() const { return id_; }

 private:
  WindowTransport& transport_;
  int id_;
};

WindowTransport::WindowTransport(TransportEnv& env, const WindowConfig& config,
                                 std::unique_ptr<CongestionControl> control)
    : env_(env), config_(config), control_(std::move(control)) {
  hosts_ = attach_host_endpoints<Host>(env_, *this);
  handle_at(window_header::kData, Side::kReceiver);
  handle_at(window_header::kAck, Side::kSender);
}

WindowTransport::~WindowTransport() = default;

void WindowTransport::start_flow(const FlowSpec& spec) {
  const auto sides = add_flow(env_.net, spec, senders_, receivers_);
  SenderFlow& sender = sides.sender;
  ReceiverFlow& receiver = sides.receiver;
  receiver.received = SegmentTracker(spec.size_bytes, env_.mtu_bytes);

  sender.base_rtt_ps = sender.data_route.packet_latency_ps(env_.mtu_bytes + env_.header_bytes) +
                       receiver.reverse_route.packet_latency_ps(env_.header_bytes);
  sender.cc.cwnd_bytes = std::uint64_t{config_.initial_cwnd_packets} * env_.mtu_bytes;
  sender.cc.ssthresh_bytes = UINT64_MAX;
  sender.cc.alpha = config_.initial_alpha;
  sender.rto_ps = config_.rto_min_ps;
  sender.rto_timer.emplace(env_.sim, [this, &sender] { on_loss_timer(sender); });
  sender.retry_timer.emplace(env_.sim, [this, &sender] { make_ready(sender); });
  sender.queue_priority = class_priority(spec);
  sender.scoreboard = SackScoreboard(env_.mtu_bytes, spec.size_bytes);
  on_receiver_start(receiver);
  on_sender_start(sender);
  make_ready(sender);
}

std::uint64_t WindowTransport::delivered_bytes(std::uint32_t flow_id) const {
  return delivered_bytes_of(receivers_, flow_id);
}

FlowCounters WindowTransport::flow_counters(std::uint32_t flow_id) const {
  const SenderFlow* sender = senders_.find(flow_id);
  const ReceiverFlow* receiver = receivers_.find(flow_id);
  if (sender == nullptr || receiver == nullptr) return {};
  return {sender->data_packets, sender->control_packets + receiver->control_packets};
}

void WindowTransport::update_deadline(std::uint32_t flow_id, TimePs deadline_ps) {
  SenderFlow* sender = senders_.find(flow_id);
  if (sender == nullptr || sender->spec.deadline_ps == deadline_ps) return;
  sender->spec.deadline_ps = deadline_ps;
  // The receiver's copy is what completion reports: the workload's view.
  if (ReceiverFlow* receiver = receivers_.find(flow_id)) receiver->spec.deadline_ps = deadline_ps;
  on_deadline_changed(*sender);
}

std::uint32_t WindowTransport::segment_bytes(const SenderFlow& flow, std::uint64_t seq) const {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(env_.mtu_bytes, flow.spec.size_bytes - seq));
}

// RFC 6675's pipe, as Linux's tcp_packets_in_flight(): what is out, less
// what the receiver reported (SACK, or without it one segment per duplicate
// ACK), less holes deemed lost, plus their retransmissions still out.
std::uint64_t WindowTransport::pipe_bytes(const SenderFlow& flow) const {
  if (config_.sack) {
    const SackScoreboard& board = flow.scoreboard;
    const std::uint64_t gone = board.sacked_bytes() + board.lost_bytes();
    const std::uint64_t out = flow.in_flight() + board.retransmitted_bytes();
    return out - std::min(out, gone);
  }
  std::uint64_t pipe = flow.in_flight() - std::min(flow.in_flight(), flow.sacked_bytes);
  if (flow.retransmit_pending) {
    pipe -= std::min<std::uint64_t>(pipe, segment_bytes(flow, flow.snd_una));
  }
  return pipe;
}

bool WindowTransport::has_retransmission(const SenderFlow& flow) const {
  return config_.sack ? flow.scoreboard.has_hole_to_resend() : flow.retransmit_pending;
}

std::uint64_t WindowTransport::retransmission_seq(const SenderFlow& flow) const {
  return config_.sack ? flow.scoreboard.hole_to_resend() : flow.snd_una;
}

bool WindowTransport::window_allows(const SenderFlow& flow) const {
  if (flow.probe_pending) return true;  // a probe goes whatever the window (Linux)
  if (has_retransmission(flow)) {
    // NewReno resends a hole at once; under PRR or SACK the window says when.
    return (!config_.prr && !config_.sack) ||
           pipe_bytes(flow) + segment_bytes(flow, retransmission_seq(flow)) <= flow.cc.cwnd_bytes;
  }
  if (flow.snd_nxt >= flow.spec.size_bytes) return false;
  return pipe_bytes(flow) + segment_bytes(flow, flow.snd_nxt) <= flow.cc.cwnd_bytes;
}

// Is the window the limit (RFC 7661)? As Linux's tcp_is_cwnd_limited(): in
// slow start while cwnd is below twice what is out, else while what is out
// fills the window. Linux hands a window to the host's queue at once, where
// this NIC pulls one segment at a time: a flow waiting at the NIC has, as in
// Linux, its whole window out. A paced flow waits elsewhere (its send gate),
// and a flow near its end is limited by its size, not the window.
bool WindowTransport::cwnd_limited(const SenderFlow& flow) const {
  const CcState& cc = flow.cc;
  std::uint64_t out = flow.in_flight();
  const std::uint64_t pipe = pipe_bytes(flow);
  if (flow.in_ready_queue && cc.cwnd_bytes > pipe) {
    out += std::min(cc.cwnd_bytes - pipe, flow.spec.size_bytes - flow.snd_nxt);
  }
  if (cc.cwnd_bytes < cc.ssthresh_bytes) return cc.cwnd_bytes < 2 * out;
  return out + env_.mtu_bytes >= cc.cwnd_bytes;
}

void WindowTransport::make_ready(SenderFlow& flow) {
  if (flow.in_ready_queue || !window_allows(flow)) return;
  flow.in_ready_queue = true;
  Host& host = *hosts_[flow.spec.src];
  host.ready[flow.queue_priority].push_back(&flow);
  host.ready_mask |= 1u << flow.queue_priority;
  env_.net.nic(host.id()).wake();
}

// The NIC is free: the first flow at the highest level that may send, sends
// one segment; it then queues again at the level it sent at.
Packet* WindowTransport::next_segment(Host& host) {
  while (host.ready_mask != 0) {
    const int level = 31 - std::countl_zero(host.ready_mask);
    RingQueue<SenderFlow*>& queue = host.ready[level];
    SenderFlow& flow = *queue.pop_front();
    if (queue.empty()) host.ready_mask &= ~(1u << level);
    flow.in_ready_queue = false;
    if (!window_allows(flow)) continue;  // window closed since it queued
    const SendGate gate = send_gate(flow);
    if (!gate.allowed) {
      if (gate.retry_at_ps != kTimeNever) flow.retry_timer->arm_at(gate.retry_at_ps);
      continue;
    }
    flow.queue_priority = gate.priority;
    Packet* packet = build_segment(flow, gate.priority);
    make_ready(flow);  // back of its level's queue if it can send more
    return packet;
  }
  return nullptr;
}

WindowTransport::SendGate WindowTransport::send_gate(SenderFlow& flow) {
  return {true, class_priority(flow.spec)};
}

Packet* WindowTransport::build_segment(SenderFlow& flow, std::uint8_t priority) {
  std::uint64_t seq = flow.snd_nxt;
  const bool new_data = !flow.probe_pending && !has_retransmission(flow);
  if (flow.probe_pending) {
    seq = flow.probe_seq;
    flow.probe_pending = false;
    flow.scoreboard.retransmitted(seq);
    ++stats_.retransmissions;
  } else if (!new_data) {
    seq = retransmission_seq(flow);
    flow.retransmit_pending = false;
    if (config_.sack) flow.scoreboard.retransmitted(seq);
    ++stats_.retransmissions;
  } else {
    if (config_.sack) flow.scoreboard.reserve(seq);
    flow.snd_nxt += segment_bytes(flow, seq);
    if (flow.snd_nxt <= flow.high_water) ++stats_.retransmissions;  // go-back-N resend
    flow.high_water = std::max(flow.high_water, flow.snd_nxt);
  }
  Packet& p =
      new_pulled_packet(env_, flow.spec, flow.data_route, PacketKind::kData, window_header::kData);
  p.priority = priority;
  p.ecn_capable = control_->ecn_capable();
  p.seq = seq;
  p.payload_bytes = segment_bytes(flow, seq);
  p.wire_bytes = p.payload_bytes + env_.header_bytes;
  if (flow.reducing()) flow.prr.out_bytes += p.payload_bytes;
  ++stats_.data_packets;
  ++flow.data_packets;
  if (new_data && probe_allowed(flow)) {
    arm_loss_timer(flow);  // RFC 8985 section 7.2: after new data, the probe waits anew
  } else if (!flow.rto_timer->armed()) {
    flow.rto_timer->arm_in(flow.rto_ps);
  }
  on_segment_sent(flow, p);
  return &p;
}

Packet& WindowTransport::new_control(const SenderFlow& flow, std::uint8_t message_type,
                                     std::uint8_t priority) {
  return new_control_packet(env_, flow.spec, flow.data_route, false, message_type, priority);
}

Packet& WindowTransport::new_control(const ReceiverFlow& flow, std::uint8_t message_type,
                                     std::uint8_t priority) {
  return new_control_packet(env_, flow.spec, flow.reverse_route, true, message_type, priority);
}

void WindowTransport::send_control(FlowSide& from, Packet& packet) {
  count_control(stats_, packet, packet.message_type == window_header::kAck, from.control_packets);
  forward(packet);
}

// Each message goes to the side its type is addressed to: DATA and ACK to
// the window mechanism, the rest to the derived transport.
void WindowTransport::on_packet(Packet& packet) {
  const bool window_message = packet.message_type <= window_header::kAck;
  switch (side_of_type_[packet.message_type]) {
    case Side::kReceiver:
      if (ReceiverFlow* flow = receivers_.find(packet.flow_id)) {
        window_message ? on_data(*flow, packet) : on_receiver_message(*flow, packet);
      }
      break;
    case Side::kSender:
      if (SenderFlow* flow = senders_.find(packet.flow_id)) {
        window_message ? on_ack(*flow, packet) : on_sender_message(*flow, packet);
      }
      break;
    case Side::kHost:
      on_host_message(packet);
      break;
    case Side::kNone:
      break;
  }
  const std::uint32_t id = packet.flow_id;
  env_.pool.release(&packet);
  if (side_finished_) {
    side_finished_ = false;
    retire_if_done(id);
  }
}

// Completion at either end comes only with a packet (DATA or ACK), so the
// end of on_packet sees every flow whose two ends are done; it looks only
// when one end has just finished (side_finished_), not at every packet.
void WindowTransport::retire_if_done(std::uint32_t id) {
  retire_when_done(
      id, senders_, receivers_, retiring_,
      [](const SenderFlow& s, const ReceiverFlow& r) { return s.done() && r.complete; },
      [this](std::uint32_t i) { return unreachable(i); }, *this, env_.observer);
}

SpareBlocks& WindowTransport::extension_blocks(std::size_t bytes) {
  for (const std::unique_ptr<SpareBlocks>& blocks : extension_blocks_) {
    if (blocks->block_bytes() == bytes) return *blocks;
  }
  return *extension_blocks_.emplace_back(std::make_unique<SpareBlocks>(bytes));
}

void WindowTransport::free_spare_memory() {
  senders_.free_spares();
  receivers_.free_spares();
  for (const std::unique_ptr<SpareBlocks>& blocks : extension_blocks_) blocks->free_spares();
}

// Nothing can reach the flow's entries: no packet on its routes (a late
// duplicate would still be ACKed, a late ACK read), no timer event queued,
// not in its host's ready queue, nothing the derived transport holds.
bool WindowTransport::unreachable(std::uint32_t id) const {
  const SenderFlow& sender = *senders_.find(id);
  const ReceiverFlow& receiver = *receivers_.find(id);
  return sender.data_route.packets_alive == 0 && receiver.reverse_route.packets_alive == 0 &&
         !sender.in_ready_queue && sender.rto_timer->idle() && sender.retry_timer->idle() &&
         extension_idle(sender);
}

std::uint8_t WindowTransport::ack_priority(const ReceiverFlow& flow, const Packet& /*data*/) const {
  return ack_class_priority(flow.spec);
}

void WindowTransport::on_data(ReceiverFlow& flow, Packet& data) {
  const bool first_copy = flow.received.add(data.seq);
  if (!first_copy) ++stats_.duplicate_packets;
  on_segment_received(flow, data, first_copy);
  if (!flow.complete && flow.received.complete()) {
    flow.complete = true;
    side_finished_ = true;
    env_.observer.on_flow_complete(flow.spec, env_.sim.now());
    on_receiver_complete(flow);
  }
  Packet& ack = new_control(flow, window_header::kAck, ack_priority(flow, data));
  ack.ack = flow.received.cumulative_bytes();
  ack.ece = data.ce;
  ack.echo_ps = data.sent_at_ps;
  ack.seq = data.seq;  // the SACK block: the segment that triggered this ACK (RFC 2018 §4)
  on_ack_built(flow, ack);
  send_control(flow, ack);
}

// Linux's order (tcp_ack): the cumulative point and the state it ends, the
// echo, then one window update, by PRR while a reduction is under way.
void WindowTransport::on_ack(SenderFlow& flow, const Packet& ack) {
  if (flow.done()) return;
  on_ack_arrived(flow, ack);

  // RTT estimate (RFC 6298) from the echoed send time.
  const TimePs sample = env_.sim.now() - ack.echo_ps;
  if (flow.srtt_ps == 0) {
    flow.srtt_ps = sample;
    flow.rttvar_ps = sample / 2;
  } else {
    const TimePs err = sample > flow.srtt_ps ? sample - flow.srtt_ps : flow.srtt_ps - sample;
    flow.rttvar_ps += (err - flow.rttvar_ps) / 4;
    flow.srtt_ps += (sample - flow.srtt_ps) / 8;
  }

  const bool window_limited = cwnd_limited(flow);  // before this ACK moves anything
  const bool advanced = ack.ack > flow.snd_una;
  const std::uint64_t acked = advanced ? ack.ack - flow.snd_una : 0;
  NewAck moved{0, false};
  if (advanced) {
    control_->on_ack(flow.cc, acked, ack.ece, ack.ack, flow.snd_nxt);
    moved = on_new_ack(flow, ack.ack);
    if (flow.done()) return;
  }
  std::uint64_t delivered = moved.delivered_bytes;
  if (config_.sack) delivered += on_sack(flow, ack.seq);
  if (flow.probe_seq != SackScoreboard::kNoSegment) check_probe(flow, ack);
  if (!advanced && ack.ack == flow.snd_una && flow.in_flight() > 0) {
    delivered += on_duplicate_ack(flow);
  }
  // RFC 6675: a hole the SACKs show lost starts recovery, duplicate ACKs or not.
  if (config_.sack && flow.scoreboard.has_hole_to_resend() && flow.snd_una >= flow.recover &&
      (flow.ca_state == CaState::kOpen || flow.ca_state == CaState::kCwr)) {
    enter_recovery(flow);
  }
  if (ack.ece && control_->ecn_capable()) on_echo(flow);

  if (flow.reducing() && config_.prr) {
    // No slow-start bonus while a hole is newly lost (a partial ACK marks the
    // next one) or still waits to be resent.
    const bool una_advanced = advanced && !moved.partial && !flow.retransmit_pending;
    flow.cc.cwnd_bytes = prr_cwnd(flow.prr, flow.cc.cwnd_bytes, pipe_bytes(flow),
                                  flow.cc.ssthresh_bytes, delivered, una_advanced, env_.mtu_bytes);
  } else if (advanced && window_limited &&
             (flow.ca_state == CaState::kOpen || flow.ca_state == CaState::kLoss)) {
    // With SACK the window grows by what this ACK newly reports delivered,
    // not by the jump of snd_una over data SACKed before (Linux tcp_ack's
    // acked_sacked): after a timeout a filled hole must not open a burst.
    grow_window(flow, config_.sack ? delivered : acked);
  }
  make_ready(flow);
}

WindowTransport::NewAck WindowTransport::on_new_ack(SenderFlow& flow, std::uint64_t ack) {
  const std::uint64_t mtu = env_.mtu_bytes;
  const std::uint64_t acked = ack - flow.snd_una;
  std::uint64_t delivered = 0;
  if (config_.sack) {
    // SACKs already reported some of it delivered.
    const std::uint64_t sacked_before = flow.scoreboard.sacked_bytes();
    flow.scoreboard.advance(ack);
    delivered = acked - std::min(acked, sacked_before - flow.scoreboard.sacked_bytes());
  } else {
    // Duplicate ACKs already reported some of it delivered, all but one
    // segment at most (Linux tcp_remove_reno_sacks).
    delivered = acked > flow.sacked_bytes ? acked - flow.sacked_bytes : std::min(acked, mtu);
    flow.sacked_bytes -= std::min(flow.sacked_bytes, acked - std::min(acked, mtu));
  }
  flow.snd_una = ack;
  if (flow.snd_nxt < ack) flow.snd_nxt = ack;  // after go-back-N the receiver may be ahead
  flow.dupacks = 0;
  flow.rto_ps = std::max(config_.rto_min_ps, flow.srtt_ps + 4 * flow.rttvar_ps);

  bool rearm = true, partial = false;
  switch (flow.ca_state) {
    case CaState::kRecovery:
      if (ack >= flow.recover) {
        flow.ca_state = CaState::kOpen;  // full ACK: deflate to ssthresh (RFC 6582)
        flow.cc.cwnd_bytes = flow.cc.ssthresh_bytes;
      } else {
        // Partial ACK: the next hole is lost too.
        partial = true;
        if (config_.sack) {
          flow.scoreboard.mark_lost(ack);
        } else {
          flow.retransmit_pending = true;
        }
        if (!config_.prr && !config_.sack) {  // deflate by the amount acked
          flow.cc.cwnd_bytes -= std::min(flow.cc.cwnd_bytes, acked);
          flow.cc.cwnd_bytes += mtu;
        }
        rearm = !config_.impatient_rto || !flow.partial_ack_seen;
        flow.partial_ack_seen = true;
      }
      break;
    case CaState::kCwr:
      // Held until something above cwr_end is acknowledged, so that the
      // receiver has seen the CWR flag (Linux tcp_fastretrans_alert).
      if (ack > flow.cwr_end) {
        flow.ca_state = CaState::kOpen;
        if (config_.prr) flow.cc.cwnd_bytes = flow.cc.ssthresh_bytes;  // tcp_end_cwnd_reduction
      }
      break;
    case CaState::kLoss:
      if (ack >= flow.recover) flow.ca_state = CaState::kOpen;
      break;
    case CaState::kOpen:
      break;
  }
  if (flow.ca_state != CaState::kRecovery) flow.sacked_bytes = 0;  // tcp_reset_reno_sack

  if (flow.done()) {
    side_finished_ = true;
    flow.rto_timer->cancel();
    flow.retry_timer->cancel();
    flow.retransmit_pending = false;
    on_sender_complete(flow);
  } else if (flow.in_flight() == 0) {
    flow.rto_timer->cancel();  // nothing outstanding (RFC 6298 §5.2): a paused flow never times out
  } else if (rearm) {
    arm_loss_timer(flow);
  }
  return {delivered, partial};
}

std::uint64_t WindowTransport::on_sack(SenderFlow& flow, std::uint64_t seq) {
  if (seq < flow.snd_una || seq >= flow.snd_nxt) return 0;  // cumulatively ACKed, or stale
  return flow.scoreboard.sack(seq, dupthresh(flow));
}

// ECN echo: one cut per window of data (RFC 8257 §3.3), from Open only
// (Linux tcp_enter_cwr: not while a reduction or a recovery is under way).
void WindowTransport::on_echo(SenderFlow& flow) {
  const bool may_cut =
      flow.ca_state == CaState::kOpen || (flow.ca_state == CaState::kLoss && !config_.loss_state);
  if (!may_cut) return;
  const FlowProgress progress{flow.spec.size_bytes - flow.snd_una, flow.spec.deadline_ps,
                              env_.sim.now(), flow.srtt_ps};
  flow.cc.ssthresh_bytes = control_->cwnd_after_echo(flow.cc, progress);
  enter_reduction(flow, CaState::kCwr);
  flow.cwr_end = flow.snd_nxt;
}

// A window reduction to ssthresh begins: by PRR, or at once.
void WindowTransport::enter_reduction(SenderFlow& flow, CaState state) {
  flow.ca_state = state;
  if (config_.prr) {
    prr_start(flow.prr, flow.cc.cwnd_bytes);
  } else {
    // NewReno keeps the segments that left the network (RFC 6582), a cut by
    // ECN none; with SACK the pipe leaves them out instead (RFC 6675).
    const std::uint64_t inflation = state == CaState::kRecovery && !config_.sack
                                        ? std::uint64_t{config_.dupack_threshold} * env_.mtu_bytes
                                        : 0;
    flow.cc.cwnd_bytes = flow.cc.ssthresh_bytes + inflation;
  }
}

void WindowTransport::grow_window(SenderFlow& flow, std::uint64_t acked_bytes) {
  CcState& cc = flow.cc;
  if (cc.cwnd_bytes < cc.ssthresh_bytes) {
    cc.cwnd_bytes += acked_bytes;  // slow start, byte counting
    return;
  }
  cc.ca_acked_bytes += acked_bytes;  // one MTU per window of ACKed bytes
  if (cc.ca_acked_bytes >= cc.cwnd_bytes) {
    cc.ca_acked_bytes -= cc.cwnd_bytes;
    cc.cwnd_bytes += env_.mtu_bytes;
  }
}

std::uint64_t WindowTransport::on_duplicate_ack(SenderFlow& flow) {
  const std::uint64_t mtu = env_.mtu_bytes;
  ++flow.dupacks;
  std::uint64_t delivered = 0;
  if (config_.prr && !config_.sack) {
    // A segment above the hole arrived; one segment at least stays a hole
    // (Linux tcp_add_reno_sack, tcp_limit_reno_sacked).
    const std::uint64_t before = flow.sacked_bytes;
    flow.sacked_bytes = std::min(before + mtu, flow.in_flight() - std::min(flow.in_flight(), mtu));
    delivered = flow.sacked_bytes - std::min(flow.sacked_bytes, before);
  }
  if (flow.ca_state == CaState::kRecovery) {
    // A segment has left the network.
    if (!config_.prr && !config_.sack) flow.cc.cwnd_bytes += mtu;
    return delivered;
  }
  // After a timeout, fast recovery waits until everything outstanding then
  // is acknowledged (RFC 6582 §3.2; Linux TCP_CA_Loss).
  if (flow.ca_state == CaState::kLoss) return delivered;
  if (flow.dupacks == dupthresh(flow) && flow.snd_una >= flow.recover) enter_recovery(flow);
  return delivered;
}

// Early retransmit (RFC 5827): with fewer than four segments in flight, as
// for a paced flow whose window is small, three duplicate ACKs may never
// come, so one fewer than the segments in flight is enough.
std::uint32_t WindowTransport::dupthresh(const SenderFlow& flow) const {
  const std::uint64_t mtu = env_.mtu_bytes;
  const std::uint64_t flight_segments = (flow.in_flight() + mtu - 1) / mtu;
  if (flight_segments >= 4) return config_.dupack_threshold;
  return std::min(config_.dupack_threshold,
                  static_cast<std::uint32_t>(std::max<std::uint64_t>(1, flight_segments - 1)));
}

void WindowTransport::enter_recovery(SenderFlow& flow) {
  flow.cc.ssthresh_bytes = std::max(flow.in_flight() / 2, std::uint64_t{2} * env_.mtu_bytes);
  flow.recover = flow.snd_nxt;
  if (config_.sack) {
    flow.scoreboard.mark_lost(flow.snd_una);
  } else {
    flow.retransmit_pending = true;
  }
  flow.partial_ack_seen = false;
  enter_reduction(flow, CaState::kRecovery);
}

void WindowTransport::on_loss_timer(SenderFlow& flow) {
  if (flow.done()) return;
  if (!flow.loss_timer_probes) {
    on_timeout(flow);
  } else if (probe_allowed(flow) && flow.in_flight() > 0) {
    send_probe(flow);
  } else {  // recovery began since it was set: the RTO takes over
    flow.loss_timer_probes = false;
    flow.rto_timer->arm_in(flow.rto_ps);
  }
}

// RFC 8985 section 7.2, as Linux's tcp_schedule_loss_probe: outside loss
// recovery, with SACK, an RTT sample and no probe out.
bool WindowTransport::probe_allowed(const SenderFlow& flow) const {
  return config_.tail_loss_probe && config_.sack && flow.srtt_ps > 0 &&
         (flow.ca_state == CaState::kOpen || flow.ca_state == CaState::kCwr) &&
         flow.probe_seq == SackScoreboard::kNoSegment && !flow.scoreboard.has_hole_to_resend();
}

void WindowTransport::arm_loss_timer(SenderFlow& flow) {
  flow.loss_timer_probes = probe_allowed(flow);
  // Every segment is ACKed at once here, so 2 SRTT without a delayed-ACK term.
  flow.rto_timer->arm_in(flow.loss_timer_probes ? std::min(2 * flow.srtt_ps, flow.rto_ps)
                                                : flow.rto_ps);
}

// RFC 8985 section 7.3: resend the last segment (new data would probe as
// well, but the window or the send gate may hold it). Its ACK, with SACK,
// shows what is missing below it. The RTO backs the probe up.
void WindowTransport::send_probe(SenderFlow& flow) {
  flow.loss_timer_probes = false;
  flow.rto_timer->arm_in(flow.rto_ps);
  flow.probe_seq = flow.scoreboard.last_unsacked();
  if (flow.probe_seq == SackScoreboard::kNoSegment) return;
  flow.probe_pending = true;
  make_ready(flow);
}

void WindowTransport::check_probe(SenderFlow& flow, const Packet& ack) {
  if (flow.snd_una <= flow.probe_seq && ack.seq != flow.probe_seq) return;
  // Sent before the probe and still missing: lost (RFC 8985 section 6.2).
  if (flow.snd_una <= flow.probe_seq) flow.scoreboard.mark_unsacked_lost_below(flow.probe_seq);
  flow.probe_seq = SackScoreboard::kNoSegment;
  flow.probe_pending = false;
}

void WindowTransport::on_timeout(SenderFlow& flow) {
  if (flow.done()) return;
  ++stats_.timeouts;
  flow.probe_seq = SackScoreboard::kNoSegment;
  flow.probe_pending = false;
  const std::uint64_t mtu = env_.mtu_bytes;
  flow.cc.ssthresh_bytes = std::max(flow.in_flight() / 2, 2 * mtu);
  flow.cc.cwnd_bytes = mtu;
  flow.cc.ca_acked_bytes = 0;
  flow.ca_state = CaState::kLoss;
  flow.recover = flow.snd_nxt;
  flow.dupacks = 0;
  flow.sacked_bytes = 0;
  if (config_.sack) {
    flow.scoreboard.mark_outstanding_lost();  // resent from the scoreboard, SACKed ones kept
  } else {
    flow.scoreboard.clear();
    flow.snd_nxt = flow.snd_una;  // go back N
  }
  flow.retransmit_pending = false;
  flow.rto_ps = std::min(flow.rto_ps * 2, config_.rto_max_ps);
  flow.rto_timer->arm_in(flow.rto_ps);
  make_ready(flow);
}

}  // namespace safs
