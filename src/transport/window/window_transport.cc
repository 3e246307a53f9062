#include "transport/tcp/tcp_transport.h"

#include <algorithm>

namespace safs {

struct TcpTransport::Flow {
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
  CcState cc;
  TimePs srtt_ps = 0;
  TimePs rttvar_ps = 0;
  TimePs rto_ps = 0;
  std::unique_ptr<Timer> rto_timer;

  // Receiver.
  SegmentTracker received;
  bool complete = false;

  std::uint64_t in_flight() const { return snd_nxt - snd_una; }
};

class TcpTransport::Host final : public PacketSink, public PacketSource {
 public:
  Host(TcpTransport& transport, int id) : transport_(transport), id_(id) {}
  void receive(Packet& packet) override { transport_.on_packet(packet); }
  Packet* pull_packet() override { return transport_.next_segment(*this); }

  RingQueue<Flow*> ready;  // flows that may send, in round-robin order
  int id() const { return id_; }

 private:
  TcpTransport& transport_;
  int id_;
};

TcpTransport::TcpTransport(TransportEnv& env, const TcpConfig& config,
                           std::unique_ptr<CongestionControl> control)
    : env_(env), config_(config), control_(std::move(control)) {
  for (int h = 0; h < env_.net.num_hosts(); ++h) {
    hosts_.push_back(std::make_unique<Host>(*this, h));
    env_.net.attach_host(h, hosts_.back().get(), hosts_.back().get());
  }
}

TcpTransport::~TcpTransport() = default;

void TcpTransport::start_flow(const FlowSpec& spec) {
  Flow& flow = flows_.emplace_back();
  flow.spec = spec;
  flow.data_route = env_.net.route(spec.src, spec.dst, spec.id);
  flow.ack_route = env_.net.route(spec.dst, spec.src, spec.id);
  flow.cc.cwnd_bytes = std::uint64_t{config_.initial_cwnd_packets} * env_.mtu_bytes;
  flow.cc.ssthresh_bytes = UINT64_MAX;
  flow.cc.alpha = config_.initial_alpha;
  flow.rto_ps = config_.rto_min_ps;
  flow.rto_timer = std::make_unique<Timer>(env_.sim, [this, &flow] { on_timeout(flow); });
  flow.received = SegmentTracker(spec.size_bytes, env_.mtu_bytes);
  if (flows_by_id_.size() <= spec.id) flows_by_id_.resize(spec.id + 1, nullptr);
  flows_by_id_[spec.id] = &flow;
  make_ready(flow);
}

std::uint64_t TcpTransport::delivered_bytes(std::uint32_t flow_id) const {
  return flow_id < flows_by_id_.size() && flows_by_id_[flow_id] != nullptr
             ? flows_by_id_[flow_id]->received.delivered_bytes()
             : 0;
}

std::uint32_t TcpTransport::segment_bytes(const Flow& flow, std::uint64_t seq) const {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(env_.mtu_bytes, flow.spec.size_bytes - seq));
}

bool TcpTransport::can_send(const Flow& flow) const {
  if (flow.retransmit_pending) return true;
  if (flow.snd_nxt >= flow.spec.size_bytes) return false;
  return flow.in_flight() + segment_bytes(flow, flow.snd_nxt) <= flow.cc.cwnd_bytes;
}

void TcpTransport::make_ready(Flow& flow) {
  if (flow.in_ready_queue || !can_send(flow)) return;
  flow.in_ready_queue = true;
  Host& host = *hosts_[flow.spec.src];
  host.ready.push_back(&flow);
  env_.net.nic(host.id()).wake();
}

// The NIC is free: the next flow in round-robin order sends one segment.
Packet* TcpTransport::next_segment(Host& host) {
  while (!host.ready.empty()) {
    Flow& flow = *host.ready.pop_front();
    flow.in_ready_queue = false;
    if (!can_send(flow)) continue;  // window closed since it queued

    std::uint64_t seq = flow.snd_nxt;
    if (flow.retransmit_pending) {
      flow.retransmit_pending = false;
      seq = flow.snd_una;
      ++stats_.retransmissions;
    } else {
      flow.snd_nxt += segment_bytes(flow, seq);
      if (flow.snd_nxt <= flow.high_water) ++stats_.retransmissions;  // go-back-N resend
      flow.high_water = std::max(flow.high_water, flow.snd_nxt);
    }
    Packet& p = *env_.pool.acquire();
    p.route = &flow.data_route;
    p.next_hop = 1;  // hop 0 is this NIC
    p.kind = PacketKind::kData;
    p.priority = config_.data_priority;
    p.ecn_capable = control_->ecn_capable();
    p.flow_id = flow.spec.id;
    p.src_host = static_cast<std::uint32_t>(flow.spec.src);
    p.dst_host = static_cast<std::uint32_t>(flow.spec.dst);
    p.seq = seq;
    p.payload_bytes = segment_bytes(flow, seq);
    p.wire_bytes = p.payload_bytes + env_.header_bytes;
    p.sent_at_ps = env_.sim.now();
    ++stats_.data_packets;
    if (!flow.rto_timer->armed()) flow.rto_timer->arm_in(flow.rto_ps);
    make_ready(flow);  // back of the round-robin queue if it can send more
    return &p;
  }
  return nullptr;
}

void TcpTransport::on_packet(Packet& packet) {
  Flow* flow = flow_for(packet.flow_id);
  if (flow != nullptr) {
    if (packet.kind == PacketKind::kData) {
      on_data(*flow, packet);
    } else {
      on_ack(*flow, packet);
    }
  }
  env_.pool.release(&packet);
}

void TcpTransport::on_data(Flow& flow, Packet& data) {
  if (!flow.received.add(data.seq)) ++stats_.duplicate_packets;
  if (!flow.complete && flow.received.complete()) {
    flow.complete = true;
    env_.observer.on_flow_complete(flow.spec, env_.sim.now());
  }
  Packet& ack = *env_.pool.acquire();
  ack.route = &flow.ack_route;
  ack.kind = PacketKind::kAck;
  ack.priority = config_.ack_priority;
  ack.flow_id = flow.spec.id;
  ack.src_host = data.dst_host;
  ack.dst_host = data.src_host;
  ack.ack = flow.received.cumulative_bytes();
  ack.ece = data.ce;
  ack.echo_ps = data.sent_at_ps;
  ack.wire_bytes = env_.header_bytes;
  ++stats_.control_packets;
  stats_.control_bytes += ack.wire_bytes;
  forward(ack);
}

void TcpTransport::on_ack(Flow& flow, const Packet& ack) {
  if (flow.snd_una >= flow.spec.size_bytes) return;  // sender already done

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

  // ECN echo: one window cut per window of data (RFC 8257 §3.3; CWR).
  if (ack.ece && control_->ecn_capable() && !flow.in_recovery && flow.snd_una >= flow.cwr_end) {
    const FlowProgress progress{flow.spec.size_bytes - flow.snd_una, flow.spec.deadline_ps,
                                env_.sim.now(), flow.srtt_ps};
    flow.cc.cwnd_bytes = control_->cwnd_after_echo(flow.cc, progress);
    flow.cc.ssthresh_bytes = flow.cc.cwnd_bytes;
    flow.cwr_end = flow.snd_nxt;
  }

  if (ack.ack > flow.snd_una) {
    const std::uint64_t acked = ack.ack - flow.snd_una;
    control_->on_ack(flow.cc, acked, ack.ece, ack.ack, flow.snd_nxt);
    on_new_ack(flow, ack.ack);
  } else if (ack.ack == flow.snd_una && flow.in_flight() > 0) {
    on_duplicate_ack(flow);
  }
  make_ready(flow);
}

void TcpTransport::on_new_ack(Flow& flow, std::uint64_t ack) {
  const std::uint64_t acked = ack - flow.snd_una;
  flow.snd_una = ack;
  if (flow.snd_nxt < ack) flow.snd_nxt = ack;  // after go-back-N the receiver may be ahead
  flow.dupacks = 0;
  flow.rto_ps = std::max(config_.rto_min_ps, flow.srtt_ps + 4 * flow.rttvar_ps);

  if (flow.in_recovery) {
    if (ack >= flow.recover) {
      flow.in_recovery = false;  // full ACK: deflate to ssthresh (RFC 6582)
      flow.cc.cwnd_bytes = flow.cc.ssthresh_bytes;
    } else {
      // Partial ACK: the next hole is lost too; deflate by the amount acked.
      flow.retransmit_pending = true;
      flow.cc.cwnd_bytes -= std::min(flow.cc.cwnd_bytes, acked);
      flow.cc.cwnd_bytes += env_.mtu_bytes;
    }
  } else if (flow.snd_una >= flow.cwr_end) {
    grow_window(flow, acked);
  }

  if (flow.snd_una >= flow.spec.size_bytes) {
    flow.rto_timer->cancel();
    flow.retransmit_pending = false;
  } else {
    flow.rto_timer->arm_in(flow.rto_ps);
  }
}

void TcpTransport::grow_window(Flow& flow, std::uint64_t acked_bytes) {
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

void TcpTransport::on_duplicate_ack(Flow& flow) {
  ++flow.dupacks;
  if (flow.in_recovery) {
    flow.cc.cwnd_bytes += env_.mtu_bytes;  // each dup ACK: a segment has left the network
    return;
  }
  if (flow.dupacks == config_.dupack_threshold && flow.snd_una >= flow.recover) {
    const std::uint64_t mtu = env_.mtu_bytes;
    flow.cc.ssthresh_bytes = std::max(flow.in_flight() / 2, 2 * mtu);
    flow.cc.cwnd_bytes = flow.cc.ssthresh_bytes + config_.dupack_threshold * mtu;
    flow.in_recovery = true;
    flow.recover = flow.snd_nxt;
    flow.retransmit_pending = true;
  }
}

void TcpTransport::on_timeout(Flow& flow) {
  if (flow.snd_una >= flow.spec.size_bytes) return;
  ++stats_.timeouts;
  const std::uint64_t mtu = env_.mtu_bytes;
  flow.cc.ssthresh_bytes = std::max(flow.in_flight() / 2, 2 * mtu);
  flow.cc.cwnd_bytes = mtu;
  flow.cc.ca_acked_bytes = 0;
  flow.in_recovery = false;
  flow.recover = flow.snd_nxt;
  flow.dupacks = 0;
  flow.snd_nxt = flow.snd_una;  // go back N
  flow.retransmit_pending = false;
  flow.rto_ps = std::min(flow.rto_ps * 2, config_.rto_max_ps);
  flow.rto_timer->arm_in(flow.rto_ps);
  make_ready(flow);
}

}  // namespace safs
