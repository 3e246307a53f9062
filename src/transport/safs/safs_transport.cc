#include "transport/safs/safs_transport.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sender_share.h"
#include "transport/safs/safs_header.h"

namespace safs {

namespace {
constexpr double kNoLimit = std::numeric_limits<double>::infinity();
}

struct SafsTransport::SenderState {
  core::GrantHolder grant;
  std::uint64_t unscheduled_limit = 0;  // bytes [0, limit) go out before any grant
  TimePs started_ps = 0;
  TimePs next_send_ps = 0;                 // pacing: earliest time of the next paced packet
  double uplink_available_bps = kNoLimit;  // what this host's uplink can give the flow
  double reported_bps = kNoLimit;          // last achievable rate reported to the receiver
  bool on_uplink_list = false;
  std::uint32_t version = 0;  // of the flow's timestamp; raised at every move
};

class SafsTransport::ReceiverHost {
 public:
  ReceiverHost(SafsTransport& transport, int host, const core::ReceiverConfig& config)
      : id(host),
        scheduler(config),
        timer(transport.env().sim, [&transport, this] { transport.poll_receiver(*this); }) {}

  int id;
  core::ReceiverScheduler scheduler;
  Timer timer;
};

SafsTransport::SafsTransport(TransportEnv& env, const WindowConfig& window,
                             const SafsConfig& config, std::unique_ptr<CongestionControl> control)
    : WindowTransport(env, window, std::move(control)), config_(config) {
  const int hosts = env.net.num_hosts();
  sending_flows_.resize(hosts);
  for (int h = 0; h < hosts; ++h) {
    core::ReceiverConfig rc = config_.receiver;
    rc.allocator.link_bps = static_cast<double>(env.net.nic(h).link().rate_bps);
    receivers_.push_back(std::make_unique<ReceiverHost>(*this, h, rc));
  }
}

SafsTransport::~SafsTransport() = default;

safs_header::Semantics SafsTransport::semantics(const Flow& flow, bool unscheduled) const {
  const FlowSpec& spec = spec_of(flow);
  return {spec.deadline_ps, spec.size_bytes, spec.dependency, spec.flow_class == FlowClass::kUrgent,
          unscheduled,      spec.criticality};
}

std::uint64_t SafsTransport::wire_bytes(std::uint64_t payload_bytes) const {
  const std::uint64_t mtu = env().mtu_bytes;
  const std::uint64_t header = env().header_bytes;
  return payload_bytes + (payload_bytes + mtu - 1) / mtu * header;
}

core::SemanticFlow SafsTransport::semantic_flow(const Flow& flow,
                                                const safs_header::Semantics& s) const {
  core::SemanticFlow f;
  f.id = spec_of(flow).id;
  f.sender = static_cast<std::uint32_t>(spec_of(flow).src);
  f.size_bytes = wire_bytes(s.size_bytes);
  f.remaining_bytes = wire_bytes(s.size_bytes - bytes_received(flow));
  // Urgency is a deadline: an "urgent" flow without one has nothing for the
  // receiver to plan against, so it is scheduled as background.
  const bool urgent = s.urgent && s.no_bubble_ps != kTimeNever;
  f.no_bubble_ps = urgent ? s.no_bubble_ps : kTimeNever;
  f.dependency = s.dependency;
  f.urgency = urgent ? core::Urgency::kUrgent : core::Urgency::kBackground;
  f.criticality = s.criticality;
  return f;
}

// ---- Sender ----------------------------------------------------------------

void SafsTransport::on_flow_start(Flow& flow) {
  const FlowSpec& spec = spec_of(flow);
  if (senders_.size() <= spec.id) senders_.resize(spec.id + 1);
  senders_[spec.id] = std::make_unique<SenderState>();
  SenderState& s = *senders_[spec.id];
  s.started_ps = env().sim.now();
  std::uint64_t limit = config_.unscheduled_bytes;
  if (limit == 0) {  // one bandwidth-delay product of this flow's path
    const TimePs rtt = flow.data_route.packet_latency_ps(env().mtu_bytes + env().header_bytes) +
                       flow.ack_route.packet_latency_ps(env().header_bytes);
    limit = static_cast<std::uint64_t>(static_cast<double>(flow.data_route.bottleneck_bps()) / 8.0 *
                                       ps_to_sec(rtt));
  }
  s.unscheduled_limit = std::min<std::uint64_t>(limit, spec.size_bytes);
  // The window must not hold back the blind first BDP.
  flow.cc.cwnd_bytes = std::max<std::uint64_t>(flow.cc.cwnd_bytes, s.unscheduled_limit);
}

WindowTransport::SendGate SafsTransport::send_gate(Flow& flow) {
  SenderState& s = sender(flow);
  const TimePs now = env().sim.now();
  const std::uint64_t next_byte = flow.retransmit_pending ? flow.snd_una : flow.snd_nxt;
  if (next_byte < s.unscheduled_limit) {
    const bool urgent = spec_of(flow).flow_class == FlowClass::kUrgent;
    return {true,
            urgent ? config_.unscheduled_urgent_priority : config_.unscheduled_background_priority};
  }
  if (s.grant.active(now)) {
    const double rate = std::min(s.grant.grant().rate_bps, s.uplink_available_bps);
    if (rate < 1.0) return {false, 0, s.grant.expires_ps()};  // paused until a new grant
    if (s.next_send_ps > now) return {false, 0, s.next_send_ps};
    return {true, s.grant.grant().priority};
  }
  if (!s.grant.held() && now < s.started_ps + config_.first_grant_wait_ps) {
    return {false, 0, s.started_ps + config_.first_grant_wait_ps};  // the grant is on its way
  }
  return {true, config_.fallback_priority};  // lost or expired lease: window only, lowest level
}

void SafsTransport::on_segment_sent(Flow& flow, Packet& packet) {
  SenderState& s = sender(flow);
  const bool unscheduled = packet.seq < s.unscheduled_limit;
  safs_header::put_semantics(packet, semantics(flow, unscheduled));
  const TimePs now = env().sim.now();
  if (unscheduled || !s.grant.active(now)) return;
  const double rate = std::min(s.grant.grant().rate_bps, s.uplink_available_bps);
  const TimePs gap = serialization_ps(packet.wire_bytes, static_cast<std::uint64_t>(rate));
  s.next_send_ps = std::max(now, s.next_send_ps) + gap;
  s.grant.on_sent(packet.payload_bytes);
}

void SafsTransport::on_deadline_changed(Flow& flow) {
  if (flow.sender_done()) return;
  SenderState& s = sender(flow);
  s.version = (s.version + 1) & safs_header::kVersionMask;
  send_meta(flow);
}

void SafsTransport::send_meta(Flow& flow) {
  Packet& meta = new_control(flow, PacketKind::kMeta, false, config_.control_priority);
  safs_header::put_semantics(meta, semantics(flow, false));
  send_control(meta);
}

// A finished flow frees its share of the sender's uplink for the others.
void SafsTransport::on_sender_complete(Flow& flow) { rebalance_uplink(spec_of(flow).src); }

// Grants to one host's flows may ask more of its uplink than it has. Serve
// them in slack order and tell each receiver what its flow can really get.
void SafsTransport::rebalance_uplink(int host) {
  std::vector<std::uint32_t>& ids = sending_flows_[host];
  std::erase_if(ids, [this](std::uint32_t id) {
    const bool done = flow_for(id)->sender_done();
    if (done) senders_[id]->on_uplink_list = false;
    return done;
  });
  const TimePs now = env().sim.now();
  const double uplink = static_cast<double>(env().net.nic(host).link().rate_bps);
  std::vector<core::SenderFlow> flows;
  for (const std::uint32_t id : ids) {
    const Flow& flow = *flow_for(id);
    const SenderState& s = *senders_[id];
    const FlowSpec& spec = spec_of(flow);
    const bool urgent = spec.flow_class == FlowClass::kUrgent;
    const double granted = s.grant.active(now) ? s.grant.grant().rate_bps : 0.0;
    // Urgent flows by slack; background ones (served after every urgent one)
    // by remaining transfer time, i.e. shortest remaining first.
    const TimePs remaining_ps =
        core::transfer_ps(static_cast<double>(spec.size_bytes - flow.snd_una), uplink);
    const TimePs slack =
        urgent && spec.has_deadline() ? spec.deadline_ps - now - remaining_ps : remaining_ps;
    flows.push_back({id, granted, urgent, slack});
  }
  const std::vector<double> available = core::available_rates(flows, uplink);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    SenderState& s = *senders_[ids[i]];
    const double before = s.uplink_available_bps;
    s.uplink_available_bps = available[i] >= uplink ? kNoLimit : available[i];
    if (s.uplink_available_bps > before) {  // it may send again, or faster
      Flow& more = *flow_for(ids[i]);
      more.retry_timer->cancel();
      s.next_send_ps = std::min(s.next_send_ps, now);
      make_ready(more);
    }
    const bool was_limited = s.reported_bps != kNoLimit;
    const bool limited = s.uplink_available_bps < flows[i].granted_bps;
    const bool moved = std::abs(s.uplink_available_bps - s.reported_bps) >
                       config_.report_threshold * std::min(s.reported_bps, uplink);
    if ((limited || was_limited) && moved) {
      s.reported_bps = limited ? s.uplink_available_bps : kNoLimit;
      Flow& flow = *flow_for(ids[i]);
      Packet& report = new_control(flow, PacketKind::kControl, false, config_.control_priority);
      safs_header::put_report(report, s.reported_bps);
      send_control(report);
    }
  }
}

// ---- Receiver ----------------------------------------------------------------

void SafsTransport::on_segment_received(Flow& flow, const Packet& packet, bool first_copy) {
  ReceiverHost& host = *receivers_[spec_of(flow).dst];
  core::ReceiverScheduler& scheduler = host.scheduler;
  const safs_header::Semantics sem = safs_header::get_semantics(packet);
  const core::FlowId id = spec_of(flow).id;
  const std::uint64_t remaining = sem.size_bytes - bytes_received(flow);
  if (sem.unscheduled && first_copy) scheduler.note_unscheduled(packet.wire_bytes, env().sim.now());
  if (remaining == 0) return;  // on_receiver_complete follows
  if (!scheduler.knows(id)) {
    newer_timestamp(id, sem.version);
    scheduler.add_flow(semantic_flow(flow, sem));
  } else {
    scheduler.update_remaining(id, wire_bytes(remaining));
    // Every packet carries the timestamp, so a lost META costs nothing while
    // data flows; the version keeps an older packet from undoing a META.
    if (newer_timestamp(id, sem.version)) {
      scheduler.update_no_bubble(id, sem.urgent ? sem.no_bubble_ps : kTimeNever);
    }
  }
  if (scheduler.next_poll_ps() == 0) request_poll(host);  // something changed
}

bool SafsTransport::newer_timestamp(core::FlowId id, std::uint32_t version) {
  if (known_version_.size() <= id) known_version_.resize(id + 1, 0);
  // Versions are 24-bit counters; "newer" is modulo 2^24 (half the range).
  const std::uint32_t ahead = (version - known_version_[id]) & safs_header::kVersionMask;
  if (ahead >= (1u << 23)) return false;
  known_version_[id] = version;
  return true;
}

void SafsTransport::on_receiver_complete(Flow& flow) {
  ReceiverHost& host = *receivers_[spec_of(flow).dst];
  host.scheduler.remove_flow(spec_of(flow).id);
  poll_receiver(host);  // at once: the next flow in line should not wait
}

void SafsTransport::on_control(Flow& flow, const Packet& packet) {
  const TimePs now = env().sim.now();
  switch (packet.kind) {
    case PacketKind::kGrant: {  // at the sender
      SenderState& s = sender(flow);
      if (flow.sender_done() || !s.grant.accept(safs_header::get_grant(packet), now)) return;
      // The receiver holds an older timestamp: the META was lost. Again.
      if (safs_header::grant_known_version(packet) != s.version) send_meta(flow);
      // The receiver grants more than this sender said it can give: the
      // report was lost. Again.
      if (s.reported_bps != kNoLimit &&
          s.grant.grant().rate_bps > (1 + config_.report_threshold) * s.reported_bps) {
        Packet& report = new_control(flow, PacketKind::kControl, false, config_.control_priority);
        safs_header::put_report(report, s.reported_bps);
        send_control(report);
      }
      // A new rate acts now: do not keep a gap computed for a lower one.
      const double rate = std::max(1.0, s.grant.grant().rate_bps);
      // The grant is an explicit signal of receiver capacity: let the window
      // slow-start up to the granted bandwidth-delay product (twice, for
      // jitter) instead of creeping there one MTU per RTT after an old cut.
      // Marks from the fabric still cut it.
      const auto granted_window = static_cast<std::uint64_t>(
          2.0 * rate / 8.0 * ps_to_sec(std::max(flow.srtt_ps, kPsPerUs)));
      flow.cc.ssthresh_bytes = std::max(flow.cc.ssthresh_bytes, granted_window);
      s.next_send_ps =
          std::min(s.next_send_ps, now + serialization_ps(env().mtu_bytes + env().header_bytes,
                                                          static_cast<std::uint64_t>(rate)));
      const int host = spec_of(flow).src;
      if (!s.on_uplink_list) {
        s.on_uplink_list = true;
        sending_flows_[host].push_back(spec_of(flow).id);
      }
      rebalance_uplink(host);
      flow.retry_timer->cancel();
      make_ready(flow);
      return;
    }
    case PacketKind::kMeta: {  // at the receiver
      if (flow.complete) return;
      ReceiverHost& host = *receivers_[spec_of(flow).dst];
      const safs_header::Semantics sem = safs_header::get_semantics(packet);
      const core::FlowId id = spec_of(flow).id;
      if (!newer_timestamp(id, sem.version)) return;  // overtaken by a newer one
      const TimePs no_bubble = sem.urgent ? sem.no_bubble_ps : kTimeNever;
      if (!host.scheduler.update_no_bubble(id, no_bubble)) {
        host.scheduler.add_flow(semantic_flow(flow, sem));
      }
      request_poll(host);
      return;
    }
    case PacketKind::kControl: {  // the sender's achievable-rate report
      ReceiverHost& host = *receivers_[spec_of(flow).dst];
      host.scheduler.set_sender_cap(spec_of(flow).id, safs_header::get_report(packet));
      request_poll(host);
      return;
    }
    default:
      return;
  }
}

void SafsTransport::poll_receiver(ReceiverHost& host) {
  const TimePs now = env().sim.now();
  send_grants(host, host.scheduler.poll(now));
  const TimePs next = host.scheduler.next_poll_ps();
  if (next != kTimeNever) {
    host.timer.arm_at(std::max(next, now + 1));
  } else {
    host.timer.cancel();
  }
}

void SafsTransport::request_poll(ReceiverHost& host) {
  const TimePs at = env().sim.now() + config_.batch_changes_ps;
  if (config_.batch_changes_ps == 0) {
    poll_receiver(host);
  } else if (!host.timer.armed() || host.timer.deadline() > at) {
    host.timer.arm_at(at);
  }
}

void SafsTransport::send_grants(ReceiverHost& host, const std::vector<core::Grant>& grants) {
  for (const core::Grant& grant : grants) {
    Flow* flow = flow_for(static_cast<std::uint32_t>(grant.flow));
    if (flow == nullptr || flow->complete) continue;
    Packet& packet = new_control(*flow, PacketKind::kGrant, true, config_.control_priority);
    const std::uint32_t id = static_cast<std::uint32_t>(grant.flow);
    safs_header::put_grant(packet, grant, id < known_version_.size() ? known_version_[id] : 0);
    send_control(packet);
    const GrantObserver* observer = env().on_grant_sent;
    if (observer != nullptr && *observer) (*observer)(env().sim.now(), id, grant.rate_bps, host.id);
  }
}

}  // namespace safs
