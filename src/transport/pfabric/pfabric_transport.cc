#include "transport/pfabric/pfabric_transport.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "transport/common/host_endpoints.h"
#include "transport/common/new_packet.h"
#include "transport/common/segment_window.h"
#include "transport/pfabric/pfabric_header.h"
#include "transport/pfabric/pfabric_queue.h"

namespace safs {

namespace {

constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();
// With rank = "deadline", flows without a deadline rank above this, by their
// remaining bytes: after every deadline (a deadline is below 2^63 ps).
constexpr std::uint64_t kNoDeadlineRank = std::uint64_t{1} << 63;

}  // namespace

struct PFabricTransport::SenderFlow {
  FlowSpec spec;
  Route data_route;  // sender -> receiver
  PathInfo path;

  // Offsets are bytes; segments are MTU-sized.
  SegmentTracker acked;  // segments the sender knows arrived
  // Segments sent since the last timeout and not ACKed; its floor follows
  // the cumulative ACK, so it spans the window, not the flow.
  SegmentWindow outstanding;
  std::uint64_t snd_nxt = 0;     // next segment to (re)send, skipping ACKed ones
  std::uint64_t high_water = 0;  // one past the highest byte ever sent
  std::uint64_t in_flight = 0;   // payload bytes of the outstanding segments
  std::uint64_t cwnd = 0;
  std::uint64_t ssthresh = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_cwnd = 0;
  std::uint64_t ca_acked = 0;  // bytes ACKed toward the next additive increase
  std::uint32_t consecutive_timeouts = 0;
  bool probe_mode = false;
  bool probe_due = false;  // probe mode: a probe may leave now
  bool sender_finished = false;
  bool retiring = false;              // both ends done: waits in retiring_ to be freed
  std::uint32_t ready_pos = kAbsent;  // position in the host's ready heap
  std::optional<Timer> rto_timer;
  std::optional<Timer> probe_timer;
  std::uint64_t data_packets = 0;  // sent, including retransmissions

  std::uint64_t remaining() const { return spec.size_bytes - acked.delivered_bytes(); }
  bool is_outstanding(std::uint64_t index) const { return outstanding.contains(index); }
  void set_outstanding(std::uint64_t index, bool on) {
    if (on) {
      outstanding.insert(index);
    } else {
      outstanding.erase(index);
    }
  }
};

struct PFabricTransport::ReceiverFlow {
  FlowSpec spec;
  Route reverse_route;  // receiver -> sender
  SegmentTracker received;
  std::uint64_t received_end = 0;  // one past the highest segment index received
  bool complete = false;
};

class PFabricTransport::Host final : public PacketSink, public PacketSource {
 public:
  Host(PFabricTransport& transport, int id)
      : ready(ReadyBefore{&transport}, ReadyPosition{&transport}), transport_(transport), id_(id) {}
  void receive(Packet& packet) override { transport_.on_packet(packet); }
  Packet* pull_packet() override { return transport_.next_packet(*this); }
  // A flow joins `ready` only in refresh, which wakes the NIC.
  bool idle() const override { return ready.empty(); }
  int id() const { return id_; }

  // Flows that can send now, shortest remaining first (SRPT at the sender).
  ReadyHeap ready;

 private:
  PFabricTransport& transport_;
  int id_;
};

bool PFabricTransport::ReadyBefore::operator()(std::uint32_t a, std::uint32_t b) const {
  const std::uint64_t ra = t->rank(*t->senders_.find(a));
  const std::uint64_t rb = t->rank(*t->senders_.find(b));
  return ra != rb ? ra < rb : a < b;
}

std::uint32_t& PFabricTransport::ReadyPosition::operator()(std::uint32_t id) const {
  return t->senders_.find(id)->ready_pos;
}

PFabricTransport::PFabricTransport(TransportEnv& env, const PFabricConfig& config)
    : env_(env), config_(config) {
  hosts_ = attach_host_endpoints<Host>(env_, *this);
}

PFabricTransport::~PFabricTransport() = default;

void PFabricTransport::start_flow(const FlowSpec& spec) {
  const auto sides = add_flow(env_.net, spec, senders_, receivers_);
  SenderFlow& flow = sides.sender;
  ReceiverFlow& receiver = sides.receiver;
  receiver.received = SegmentTracker(spec.size_bytes, env_.mtu_bytes);

  // The path's bandwidth-delay product: bottleneck rate x the unloaded RTT of
  // a full packet and its ACK.
  const std::uint64_t mtu = env_.mtu_bytes;
  const std::uint64_t full_packet = mtu + env_.header_bytes;
  PathInfo& path = flow.path;
  path.base_rtt_ps = flow.data_route.packet_latency_ps(full_packet) +
                     receiver.reverse_route.packet_latency_ps(env_.header_bytes);
  path.bdp_bytes = static_cast<std::uint64_t>(
      static_cast<Uint128>(flow.data_route.bottleneck_bps()) *
      static_cast<Uint128>(path.base_rtt_ps) / (Uint128{8} * 1'000'000'000'000u));
  const auto bdp_packets = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, (path.bdp_bytes + full_packet - 1) / full_packet));
  path.initial_window_packets =
      config_.initial_window_packets > 0 ? config_.initial_window_packets : bdp_packets;
  const std::uint64_t two_bdp_packets = (2 * path.bdp_bytes + full_packet - 1) / full_packet;
  path.max_window_packets =
      config_.max_window_packets > 0
          ? config_.max_window_packets
          : static_cast<std::uint32_t>(two_bdp_packets > 1 ? two_bdp_packets - 1 : 1);
  path.max_window_packets = std::max(path.max_window_packets, path.initial_window_packets);
  // The paper's RTO is ~3 x RTT with 2-BDP buffers: the RTT plus the time to
  // drain one full buffer. Derived for this path and buffer, and at least 3 RTT.
  path.rto_ps =
      config_.rto_ps > 0
          ? config_.rto_ps
          : std::max(3 * path.base_rtt_ps,
                     path.base_rtt_ps + serialization_ps(config_.switch_buffer_bytes,
                                                         flow.data_route.bottleneck_bps()));

  flow.cwnd = path.initial_window_packets * mtu;
  flow.max_cwnd = path.max_window_packets * mtu;
  flow.acked = SegmentTracker(spec.size_bytes, env_.mtu_bytes);
  flow.rto_timer.emplace(env_.sim, [this, &flow] { on_timeout(flow); });
  flow.probe_timer.emplace(env_.sim, [this, &flow] { on_probe_timer(flow); });

  if (spec.size_bytes == 0) {  // nothing to move: complete on arrival
    flow.sender_finished = receiver.complete = true;
    env_.observer.on_flow_complete(flow.spec, env_.sim.now());
    retire_if_done(spec.id);
    return;
  }
  refresh(flow);
}

std::uint64_t PFabricTransport::delivered_bytes(std::uint32_t flow_id) const {
  return delivered_bytes_of(receivers_, flow_id);
}

// ACKs and probes are not scheduling control: only data is counted.
FlowCounters PFabricTransport::flow_counters(std::uint32_t flow_id) const {
  const SenderFlow* flow = senders_.find(flow_id);
  return flow != nullptr ? FlowCounters{flow->data_packets, 0} : FlowCounters{};
}

// The deadline is the rank under rank = "deadline": the flow moves in its
// sender's order at once, and its next packets carry the new rank.
void PFabricTransport::update_deadline(std::uint32_t flow_id, TimePs deadline_ps) {
  SenderFlow* flow = senders_.find(flow_id);
  if (flow == nullptr) return;
  flow->spec.deadline_ps = deadline_ps;
  if (ReceiverFlow* receiver = receivers_.find(flow_id)) receiver->spec.deadline_ps = deadline_ps;
  if (config_.rank == PFabricRank::kDeadline) refresh(*flow);
}

PFabricTransport::PathInfo PFabricTransport::path_info(std::uint32_t flow_id) const {
  const SenderFlow* flow = senders_.find(flow_id);
  return flow != nullptr ? flow->path : PathInfo{};
}

std::uint32_t PFabricTransport::segment_bytes(const SenderFlow& flow, std::uint64_t seq) const {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(env_.mtu_bytes, flow.spec.size_bytes - seq));
}

// DATA and PROBE go to the receiver side, ACK to the sender side.
void PFabricTransport::on_packet(Packet& packet) {
  const std::uint32_t id = packet.flow_id;
  switch (packet.message_type) {
    case pfabric_header::kData:
      if (ReceiverFlow* flow = receivers_.find(id)) on_data(*flow, packet);
      break;
    case pfabric_header::kProbe:  // answer with the receiver's state
      if (ReceiverFlow* flow = receivers_.find(id)) {
        send_ack(*flow, packet.seq, true, packet.sent_at_ps);
      }
      break;
    case pfabric_header::kAck:
      if (SenderFlow* flow = senders_.find(id)) on_ack(*flow, packet);
      break;
    default:
      break;
  }
  env_.pool.release(&packet);
  if (side_finished_) {
    side_finished_ = false;
    retire_if_done(id);
  }
}

void PFabricTransport::retire_if_done(std::uint32_t id) {
  retire_when_done(
      id, senders_, receivers_, retiring_,
      [](const SenderFlow& s, const ReceiverFlow& r) { return s.sender_finished && r.complete; },
      [this](std::uint32_t i) { return unreachable(i); }, *this, env_.observer);
}

// Nothing can reach the flow's entries: no packet on its routes (a late
// duplicate would still be ACKed), no timer event queued, not in its host's
// ready heap.
bool PFabricTransport::unreachable(std::uint32_t id) const {
  const SenderFlow& sender = *senders_.find(id);
  const ReceiverFlow& receiver = *receivers_.find(id);
  return sender.data_route.packets_alive == 0 && receiver.reverse_route.packets_alive == 0 &&
         sender.ready_pos == kAbsent && sender.rto_timer->idle() && sender.probe_timer->idle();
}

// --- Receiver ---

void PFabricTransport::on_data(ReceiverFlow& flow, const Packet& data) {
  if (flow.received.add(data.seq)) {
    flow.received_end = std::max(flow.received_end, data.seq / env_.mtu_bytes + 1);
    if (!flow.complete && flow.received.complete()) {
      flow.complete = true;
      side_finished_ = true;
      env_.observer.on_flow_complete(flow.spec, env_.sim.now());
    }
  } else {
    ++stats_.duplicate_packets;
  }
  send_ack(flow, data.seq, false, data.sent_at_ps);
}

void PFabricTransport::send_ack(ReceiverFlow& flow, std::uint64_t seq, bool probe, TimePs echo_ps) {
  // Pushed through the NIC queue at the top level, ahead of pulled data.
  Packet& ack = new_control_packet(env_, flow.spec, flow.reverse_route, true, pfabric_header::kAck,
                                   kTopPriority);
  ack.rank = 0;  // the highest pFabric priority
  ack.ack = flow.received.cumulative_bytes();
  ack.seq = seq;
  pfabric_header::set_answers_probe(ack, probe);
  // Selective ACK of the segments received above the cumulative point.
  const std::uint64_t first_missing = ack.ack / env_.mtu_bytes;
  const std::uint64_t end =
      std::min(flow.received_end, first_missing + 1 + pfabric_header::kSackSegments);
  for (std::uint64_t index = first_missing + 1; index < end; ++index) {
    if (flow.received.has(index)) pfabric_header::set_sack(ack, index - first_missing - 1);
  }
  ack.echo_ps = echo_ps;
  ++stats_.control_packets;
  stats_.control_bytes += ack.wire_bytes;
  forward(ack);
}

// --- Sender ---

std::uint64_t PFabricTransport::mark_acked(SenderFlow& flow, std::uint64_t seq) {
  if (seq >= flow.spec.size_bytes || !flow.acked.add(seq)) return 0;
  const std::uint64_t index = seq / env_.mtu_bytes;
  const std::uint64_t length = flow.acked.segment_length(index);
  if (flow.is_outstanding(index)) {
    flow.set_outstanding(index, false);
    flow.in_flight -= length;
  }
  return length;
}

void PFabricTransport::on_ack(SenderFlow& flow, const Packet& ack) {
  if (flow.sender_finished) return;
  const std::uint64_t mtu = env_.mtu_bytes;
  const std::uint64_t old_cumulative = flow.acked.cumulative_bytes();
  std::uint64_t newly_acked = 0;
  if (!pfabric_header::answers_probe(ack)) newly_acked += mark_acked(flow, ack.seq);
  const std::uint64_t cumulative = std::min(ack.ack, flow.spec.size_bytes);
  while (flow.acked.cumulative_bytes() < cumulative) {
    newly_acked += mark_acked(flow, flow.acked.cumulative_bytes());
  }
  const std::uint64_t sack_base = cumulative / mtu + 1;
  pfabric_header::for_each_sack(
      ack, [&](std::uint64_t bit) { newly_acked += mark_acked(flow, (sack_base + bit) * mtu); });
  flow.outstanding.raise_floor(flow.acked.cumulative_bytes() / mtu);  // all ACKed below it

  if (flow.probe_mode) {
    // Any ACK ends probe mode; the flow re-enters slow start from 1 MTU
    // (its window was reset by the timeout that started probe mode).
    flow.probe_mode = false;
    flow.probe_due = false;
    flow.probe_timer->cancel();
    flow.consecutive_timeouts = 0;
  }
  if (newly_acked > 0) {
    flow.consecutive_timeouts = 0;
    grow_window(flow, newly_acked);
  }
  if (flow.acked.complete()) {
    finish_sender(flow);
    return;
  }
  flow.snd_nxt = std::max(flow.snd_nxt, flow.acked.cumulative_bytes());
  // The timer restarts when the cumulative point advances (RFC 6298 5.3; the
  // pFabric ns-2 and YAPS senders alike), not on selective ACKs, so a hole is
  // repaired one RTO after the cumulative point stalls.
  if (flow.in_flight == 0) {
    flow.rto_timer->cancel();  // nothing outstanding: nothing can time out
  } else if (flow.acked.cumulative_bytes() > old_cumulative) {
    flow.rto_timer->arm_in(flow.path.rto_ps);
  }
  refresh(flow);
}

void PFabricTransport::grow_window(SenderFlow& flow, std::uint64_t acked_bytes) {
  if (flow.cwnd < flow.ssthresh) {
    flow.cwnd += acked_bytes;  // slow start, byte counting
  } else {
    flow.ca_acked += acked_bytes;  // one MTU per window of ACKed bytes
    if (flow.ca_acked >= flow.cwnd) {
      flow.ca_acked -= flow.cwnd;
      flow.cwnd += env_.mtu_bytes;
    }
  }
  flow.cwnd = std::min(flow.cwnd, flow.max_cwnd);
}

void PFabricTransport::on_timeout(SenderFlow& flow) {
  if (flow.sender_finished || flow.probe_mode) return;
  ++stats_.timeouts;
  ++flow.consecutive_timeouts;
  const std::uint64_t mtu = env_.mtu_bytes;
  flow.ssthresh = std::max(flow.cwnd / 2, 2 * mtu);  // half the window before the timeout
  flow.cwnd = mtu;                                   // then slow start
  flow.ca_acked = 0;
  // Everything outstanding is presumed lost; resend from the first unACKed
  // segment, skipping the ones selectively ACKed.
  const std::uint64_t first = flow.acked.cumulative_bytes() / mtu;
  const std::uint64_t end = (flow.high_water + mtu - 1) / mtu;
  for (std::uint64_t index = first; index < end; ++index) flow.set_outstanding(index, false);
  flow.in_flight = 0;
  flow.snd_nxt = flow.acked.cumulative_bytes();
  if (flow.consecutive_timeouts >= config_.probe_after_timeouts) {
    flow.probe_mode = true;
    flow.probe_due = true;
    ++pfabric_stats_.probe_mode_entries;
  }
  refresh(flow);
}

void PFabricTransport::on_probe_timer(SenderFlow& flow) {
  if (flow.sender_finished || !flow.probe_mode) return;
  flow.probe_due = true;
  refresh(flow);
}

void PFabricTransport::finish_sender(SenderFlow& flow) {
  flow.sender_finished = true;
  side_finished_ = true;
  flow.rto_timer->cancel();
  flow.probe_timer->cancel();
  flow.probe_mode = flow.probe_due = false;
  flow.in_flight = 0;
  refresh(flow);  // leaves the ready heap
}

std::uint64_t PFabricTransport::rank(const SenderFlow& flow) const {
  if (config_.rank == PFabricRank::kRemainingSize) return flow.remaining();
  if (!flow.spec.has_deadline()) return kNoDeadlineRank + flow.remaining();
  return static_cast<std::uint64_t>(std::max<TimePs>(0, flow.spec.deadline_ps));
}

bool PFabricTransport::sendable(SenderFlow& flow) {
  if (flow.sender_finished) return false;
  if (flow.probe_mode) return flow.probe_due;
  const std::uint64_t mtu = env_.mtu_bytes;
  while (flow.snd_nxt < flow.spec.size_bytes && flow.acked.has(flow.snd_nxt / mtu)) {
    flow.snd_nxt += segment_bytes(flow, flow.snd_nxt);
  }
  if (flow.snd_nxt >= flow.spec.size_bytes) return false;
  return flow.in_flight + segment_bytes(flow, flow.snd_nxt) <= flow.cwnd;
}

void PFabricTransport::refresh(SenderFlow& flow) {
  Host& host = *hosts_[flow.spec.src];
  const bool ready = sendable(flow);
  if (flow.ready_pos == kAbsent) {
    if (!ready) return;
    host.ready.push(flow.spec.id);
    env_.net.nic(host.id()).wake();
  } else if (!ready) {
    host.ready.erase(flow.spec.id);
  } else {
    host.ready.update(flow.spec.id);  // its rank may have changed
  }
}

// The NIC is free: the ready flow with the smallest rank sends one packet.
Packet* PFabricTransport::next_packet(Host& host) {
  while (!host.ready.empty()) {
    SenderFlow& flow = *senders_.find(host.ready.top());
    if (!sendable(flow)) {
      host.ready.erase(flow.spec.id);
      continue;
    }
    Packet* packet = flow.probe_mode ? build_probe(flow) : build_segment(flow);
    refresh(flow);
    return packet;
  }
  return nullptr;
}

Packet* PFabricTransport::build_segment(SenderFlow& flow) {
  const std::uint64_t seq = flow.snd_nxt;
  const std::uint32_t length = segment_bytes(flow, seq);
  if (seq < flow.high_water) ++stats_.retransmissions;
  flow.snd_nxt += length;
  flow.high_water = std::max(flow.high_water, flow.snd_nxt);
  flow.set_outstanding(seq / env_.mtu_bytes, true);
  flow.in_flight += length;

  Packet& p =
      new_pulled_packet(env_, flow.spec, flow.data_route, PacketKind::kData, pfabric_header::kData);
  p.rank = rank(flow);
  p.seq = seq;
  p.payload_bytes = length;
  p.wire_bytes = length + env_.header_bytes;
  ++stats_.data_packets;
  ++flow.data_packets;
  if (!flow.rto_timer->armed()) flow.rto_timer->arm_in(flow.path.rto_ps);
  return &p;
}

// A minimum-size packet (header and one byte, as in the paper) that carries no
// data; the receiver answers it with an ACK of its state. One per RTT.
Packet* PFabricTransport::build_probe(SenderFlow& flow) {
  flow.probe_due = false;
  Packet& p = new_pulled_packet(env_, flow.spec, flow.data_route, PacketKind::kControl,
                                pfabric_header::kProbe);
  p.rank = rank(flow);
  p.seq = flow.acked.cumulative_bytes();
  p.payload_bytes = 0;  // the byte is padding: delivery counts whole segments only
  p.wire_bytes = env_.header_bytes + 1;
  ++stats_.control_packets;
  stats_.control_bytes += p.wire_bytes;
  ++pfabric_stats_.probes;
  flow.probe_timer->arm_in(flow.path.base_rtt_ps);
  return &p;
}

}  // namespace safs
