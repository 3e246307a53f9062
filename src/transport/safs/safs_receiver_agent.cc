#include "transport/safs/safs_receiver_agent.h"

#include <algorithm>

namespace safs {

struct SafsTransport::ReceiverAgent::FlowState final : FlowExtension {
  std::uint32_t known_version = 0;  // of the flow's timestamp
  bool on_background_stream = false;
  std::uint64_t counted_bytes = 0;    // its remaining wire bytes, as its stream counts them
  bool ignored_seen = false;          // a packet of it arrived that the scheduler ignores
  TimePs last_data_ps = kTimeNever;   // its latest segment's arrival (grants on ACKs)
  TimePs held_until_ps = kTimeNever;  // a grant waits for its ACK until then
  core::Grant held_grant;
  double sent_rate_bps = -1;  // of the latest grant sent, alone or on an ACK (-1: none)
};

SafsTransport::ReceiverAgent::FlowState& SafsTransport::ReceiverAgent::state(
    const ReceiverFlow& flow) {
  return flow.ext<FlowState>();
}

void SafsTransport::ReceiverAgent::on_start(ReceiverFlow& flow) {
  flow.extension = transport_.make_extension<FlowState>();
}

std::uint64_t SafsTransport::ReceiverAgent::wire_bytes(std::uint64_t payload_bytes) const {
  const std::uint64_t mtu = transport_.env().mtu_bytes;
  const std::uint64_t header = transport_.env().header_bytes;
  return payload_bytes + (payload_bytes + mtu - 1) / mtu * header;
}

core::SemanticFlow SafsTransport::ReceiverAgent::semantic_flow(
    const ReceiverFlow& flow, const safs_header::Semantics& s) const {
  core::SemanticFlow f;
  f.id = flow.spec.id;
  f.sender = static_cast<std::uint32_t>(flow.spec.src);
  f.size_bytes = wire_bytes(s.size_bytes);
  f.remaining_bytes = wire_bytes(s.size_bytes - flow.received.delivered_bytes());
  // An urgent flow without a timestamp stays urgent: the allocator serves
  // it ahead of background without a rate to plan. With untimed_urgent off
  // it is scheduled as background, having nothing to plan against.
  const bool urgent =
      s.urgent && (s.no_bubble_ps != kTimeNever ||
                   transport_.config_.receiver.allocator.untimed_urgent_before_background);
  f.no_bubble_ps = urgent ? s.no_bubble_ps : kTimeNever;
  f.dependency = s.dependency;
  f.urgency = urgent ? core::Urgency::kUrgent : core::Urgency::kBackground;
  f.criticality = s.criticality;
  // Started under a lease it did not get itself: its stream's, or the one
  // planned for it when it was announced.
  f.on_stream_lease = s.on_stream_lease;
  if (transport_.config_.stream_leases && s.urgent) {
    // Streams are per sender and class; the receiver is this host.
    f.stream = (static_cast<core::StreamId>(flow.spec.src) << 1) | 1u;
  }
  return f;
}

// A flow sent whole blind needs no grant: its bytes are on their way and
// count as blind arrivals (ReceiverScheduler::note_unscheduled). Allocated,
// it would take rate from flows that can use it; under shortest remaining
// first every short flow would pause the flow being served for a round trip.
// A flow sent under its window alone is unmanaged traffic to the receiver.
bool SafsTransport::ReceiverAgent::ignored(const safs_header::Semantics& s) const {
  return s.window_only || (s.all_unscheduled && !transport_.config_.schedule_blind_flows);
}

bool SafsTransport::ReceiverAgent::newer_timestamp(ReceiverFlow& flow, std::uint32_t version) {
  std::uint32_t& known = state(flow).known_version;
  // Versions are 24-bit counters; "newer" is modulo 2^24 (half the range).
  const std::uint32_t ahead = (version - known) & safs_header::kVersionMask;
  if (ahead >= (1u << 23)) return false;
  known = version;
  return true;
}

void SafsTransport::ReceiverAgent::on_segment(ReceiverFlow& flow, const Packet& packet,
                                              bool first_copy) {
  const safs_header::Semantics sem = safs_header::get_semantics(packet);
  const core::FlowId id = flow.spec.id;
  const std::uint64_t remaining = sem.size_bytes - flow.received.delivered_bytes();
  if (transport_.config_.grant_carrier_wait_ps > 0) {
    data_arriving_ = true;
    arriving_flow_ = flow.spec.id;
    state(flow).last_data_ps = transport_.env().sim.now();
  }
  if (sem.unscheduled && first_copy) {
    scheduler_.note_unscheduled(packet.wire_bytes, transport_.env().sim.now(), !sem.urgent);
  }
  if (sem.window_only) {
    scheduler_.note_ungranted_background(transport_.env().sim.now());
    if (scheduler_.has_changes()) on_change();
    return;
  }
  if (remaining == 0) return;  // on_complete follows
  if (sem.background_stream) {
    on_stream_segment(flow, remaining);
    if (scheduler_.has_changes()) on_change();
    return;
  }
  if (ignored(sem)) {
    // Announced, then sent whole blind after all (its blind cap grew): its
    // first packet drops the plan.
    if (sem.urgent && !state(flow).ignored_seen) {
      scheduler_.forget_announcement(static_cast<std::uint32_t>(flow.spec.src), sem.dependency);
    }
    state(flow).ignored_seen = true;
    return;
  }
  if (!scheduler_.knows(id)) {
    newer_timestamp(flow, sem.version);
    scheduler_.add_flow(semantic_flow(flow, sem));
  } else {
    scheduler_.update_remaining(id, wire_bytes(remaining));
    // Every packet carries the timestamp, so a lost META costs nothing while
    // data flows; the version keeps an older packet from undoing a META.
    if (newer_timestamp(flow, sem.version)) {
      scheduler_.update_no_bubble(id, sem.urgent ? sem.no_bubble_ps : kTimeNever);
    }
  }
  if (scheduler_.has_changes()) on_change();
}

void SafsTransport::ReceiverAgent::on_complete(ReceiverFlow& flow) {
  if (state(flow).on_background_stream) on_stream_member_complete(flow);
  scheduler_.complete_flow(flow.spec.id, transport_.env().sim.now());
  poll();  // at once: the next flow in line should not wait
}

void SafsTransport::ReceiverAgent::on_meta(ReceiverFlow& flow, const Packet& packet) {
  if (flow.complete) return;
  const safs_header::Semantics sem = safs_header::get_semantics(packet);
  if (ignored(sem)) return;
  if (!newer_timestamp(flow, sem.version)) return;  // overtaken by a newer one
  const TimePs no_bubble = sem.urgent ? sem.no_bubble_ps : kTimeNever;
  if (!scheduler_.update_no_bubble(flow.spec.id, no_bubble)) {
    scheduler_.add_flow(semantic_flow(flow, sem));
  }
  on_change();
}

// The sender's achievable-rate report.
void SafsTransport::ReceiverAgent::on_report(ReceiverFlow& flow, const Packet& packet) {
  scheduler_.set_sender_cap(flow.spec.id, safs_header::get_report(packet));
  on_change();
}

// The sender's clock is not ours: the transfer is taken to start its lead
// after the announcement arrives (a one-way delay later than the sender
// meant, which announce_lead_ps covers).
void SafsTransport::ReceiverAgent::on_announce(const Packet& packet) {
  const safs_header::Announcement a = safs_header::get_announcement(packet);
  const TimePs now = transport_.env().sim.now();
  scheduler_.announce({.planned_id = core::planned_flow_id(packet.src_host, a.number),
                       .sender = packet.src_host,
                       .size_bytes = wire_bytes(a.size_bytes),
                       .start_ps = now + a.starts_in_ps,
                       .no_bubble_ps = a.no_bubble_ps,
                       .dependency = a.dependency},
                      now);
  poll();  // plans it now if it is due, and re-arms the timer for when it is
}

void SafsTransport::ReceiverAgent::poll() {
  const TimePs now = transport_.env().sim.now();
  send_grants(scheduler_.poll(now));
  const TimePs next = scheduler_.next_poll_ps();
  if (next != kTimeNever) {
    timer_.arm_at(std::max(next, now + 1));
  } else {
    timer_.cancel();
  }
}

void SafsTransport::ReceiverAgent::on_change() {
  const TimePs batch_ps = transport_.config_.batch_changes_ps;
  const TimePs at = transport_.env().sim.now() + batch_ps;
  if (batch_ps == 0) {
    poll();
  } else if (!timer_.armed() || timer_.deadline() > at) {
    timer_.arm_at(at);
  }
}

void SafsTransport::ReceiverAgent::send_grants(const std::vector<core::Grant>& grants) {
  const TimePs now = transport_.env().sim.now();
  for (const core::Grant& grant : grants) {
    if (core::is_planned(grant.flow)) {
      send_host_grant(static_cast<int>(core::planned_sender(grant.flow)),
                      safs_header::kPlannedGrant, grant, core::planned_number(grant.flow));
      continue;
    }
    if (core::is_background_stream(grant.flow)) {
      send_host_grant(static_cast<int>(core::background_stream_sender(grant.flow)),
                      safs_header::kStreamGrant, grant, 0);
      continue;
    }
    ReceiverFlow* flow = transport_.receiver_flow(static_cast<std::uint32_t>(grant.flow));
    if (flow == nullptr || flow->complete) continue;
    const TimePs wait_ps = ack_wait_ps(*flow, now);
    if (wait_ps != kTimeNever) {
      hold_for_ack(*flow, grant, now, now + wait_ps);
    } else {
      send_grant_packet(*flow, grant);
    }
  }
}

void SafsTransport::ReceiverAgent::send_grant_packet(ReceiverFlow& flow, const core::Grant& grant) {
  Packet& packet =
      transport_.new_control(flow, safs_header::kGrant, transport_.config_.control_priority);
  safs_header::put_grant(packet, grant, state(flow).known_version);
  state(flow).sent_rate_bps = grant.rate_bps;
  if (state(flow).held_until_ps != kTimeNever) {  // a held older grant is superseded
    state(flow).held_until_ps = kTimeNever;
    ++held_grants_not_sent_;
  }
  transport_.send_control(flow, packet);
  observe_grant(flow.spec.id, grant.rate_bps);
}

void SafsTransport::ReceiverAgent::observe_grant(std::uint32_t flow, double rate_bps) const {
  const TransportEnv& env = transport_.env();
  const GrantObserver* observer = env.on_grant_sent;
  if (observer != nullptr && *observer) (*observer)(env.sim.now(), flow, rate_bps, host_);
}

// Grants on ACKs. The flow whose segment moved the allocation has its ACK
// leaving now: its grant rides it. Another flow's grant waits for the flow's
// next ACK when its next segment is due (at the rate its sender holds)
// within the wait, and goes alone at the wait's end if none came. Every
// grant must still reach its sender within the control delay that the
// scheduler counts on (core::GrantConfig: break before make for a
// decrease; for any grant, when the sender's lease starts, hence when a
// lease lapses or a stream's reservation ends): it waits only what is left
// of that delay after its flight on the empty path with one full packet
// ahead of it at every hop.
TimePs SafsTransport::ReceiverAgent::ack_wait_ps(const ReceiverFlow& flow, TimePs now) const {
  const SafsConfig& config = transport_.config_;
  if (config.grant_carrier_wait_ps == 0) return kTimeNever;
  if (data_arriving_ && arriving_flow_ == flow.spec.id) return 0;
  const FlowState& f = state(flow);
  // Its sender holds no rate (or under 1 bit/s): it sends nothing to wait for.
  const auto held_bps = static_cast<std::uint64_t>(std::max(0.0, f.sent_rate_bps));
  if (f.last_data_ps == kTimeNever || held_bps == 0) return kTimeNever;
  const TimePs flight_ps = worst_grant_flight_ps(flow);
  const TimePs bound_ps = config.receiver.grants.control_delay_ps;
  if (flight_ps >= bound_ps) return kTimeNever;
  const TimePs wait_ps = std::min(config.grant_carrier_wait_ps, bound_ps - flight_ps);
  const TransportEnv& env = transport_.env();
  const TimePs next_ps =
      f.last_data_ps + serialization_ps(env.mtu_bytes + env.header_bytes, held_bps);
  if (next_ps > now + wait_ps || next_ps + wait_ps < now) return kTimeNever;  // too far, or stalled
  return wait_ps;
}

TimePs SafsTransport::ReceiverAgent::worst_grant_flight_ps(const ReceiverFlow& flow) const {
  const TransportEnv& env = transport_.env();
  const Route& route = flow.reverse_route;
  TimePs ahead_ps = 0;  // a full packet in service at every hop
  for (std::size_t i = 0; i < route.links(); ++i) {
    ahead_ps += serialization_ps(env.mtu_bytes + env.header_bytes, route.rate_bps[i]);
  }
  return ahead_ps + route.packet_latency_ps(env.header_bytes + safs_header::kGrantOptionBytes);
}

void SafsTransport::ReceiverAgent::hold_for_ack(ReceiverFlow& flow, const core::Grant& grant,
                                                TimePs now, TimePs until_ps) {
  FlowState& f = state(flow);
  if (f.held_until_ps != kTimeNever) ++held_grants_not_sent_;
  f.held_grant = grant;  // the newest replaces a held one, and keeps the earlier deadline
  if (data_arriving_ && arriving_flow_ == flow.spec.id) {  // its ACK is leaving now
    f.held_until_ps = now;
    return;
  }
  if (grant.rate_bps < f.sent_rate_bps) ++decreases_held_;
  longest_hold_ps_ = std::max(longest_hold_ps_, std::min(f.held_until_ps, until_ps) - now);
  if (f.held_until_ps <= until_ps) return;
  f.held_until_ps = until_ps;
  held_.push({until_ps, flow.spec.id});
  if (!carrier_timer_.armed() || carrier_timer_.deadline() > until_ps) {
    carrier_timer_.arm_at(until_ps);
  }
}

void SafsTransport::ReceiverAgent::on_ack_built(ReceiverFlow& flow, Packet& ack) {
  data_arriving_ = false;
  FlowState& f = state(flow);
  if (f.held_until_ps == kTimeNever) return;
  f.held_until_ps = kTimeNever;
  // Even on the flow's last ACK: its sender reads the grant before the ACK
  // ends the flow, so a stream lease keeps the rate the receiver counts.
  safs_header::put_grant_on_ack(ack, f.held_grant, f.known_version);
  f.sent_rate_bps = f.held_grant.rate_bps;
  // It is a grant now: it must arrive within the control delay, as a GRANT does.
  ack.priority = std::max(ack.priority, transport_.config_.control_priority);
  ++grants_on_acks_;
  observe_grant(flow.spec.id, f.held_grant.rate_bps);
}

void SafsTransport::ReceiverAgent::send_overdue_grants() {
  const TimePs now = transport_.env().sim.now();
  while (!held_.empty() && held_.top().first <= now) {
    const auto [deadline_ps, id] = held_.top();
    held_.pop();
    ReceiverFlow* flow = transport_.receiver_flow(id);
    // Gone, on an ACK meanwhile (a flow's last ACK takes what it holds),
    // or held again to an earlier deadline.
    if (flow == nullptr || state(*flow).held_until_ps != deadline_ps) continue;
    state(*flow).held_until_ps = kTimeNever;
    send_grant_packet(*flow, state(*flow).held_grant);
    ++grants_after_waiting_;
  }
  if (!held_.empty()) carrier_timer_.arm_at(held_.top().first);
}

// Grants of a planned transfer or of a background stream name no flow: they
// go to the sender's host, a planned one with the announcement's number.
void SafsTransport::ReceiverAgent::send_host_grant(int sender, std::uint8_t message_type,
                                                   const core::Grant& grant, std::uint32_t tag) {
  Packet& packet = transport_.new_host_message(host_, sender, message_type);
  safs_header::put_grant(packet, grant, tag);
  transport_.send_host_message(packet);
}

// The stream is a background flow whose remaining bytes are its flows'. When
// its last flow ends it leaves the allocation, and its sender drops the
// grant. (Keeping its lease reserved for the sender's next background flow,
// as stream leases do, held rate out of every receiver's budget between KV
// flows: afd-shallow's p99 TPOT was 8% worse; docs/safs.md.)
void SafsTransport::ReceiverAgent::on_stream_segment(ReceiverFlow& flow,
                                                     std::uint64_t remaining_bytes) {
  FlowState& f = state(flow);
  const auto sender = static_cast<std::uint32_t>(flow.spec.src);
  StreamBytes& stream = background_streams_[sender];
  const std::uint64_t remaining = wire_bytes(remaining_bytes);
  if (!f.on_background_stream) {
    f.on_background_stream = true;
    ++stream.flows;
  }
  stream.remaining_bytes -= std::min(stream.remaining_bytes, f.counted_bytes);  // 0 at first
  stream.remaining_bytes += remaining;
  f.counted_bytes = remaining;
  const core::FlowId id = core::background_stream_id(sender);
  if (scheduler_.knows(id)) {
    scheduler_.update_remaining(id, stream.remaining_bytes);
    return;
  }
  core::SemanticFlow aggregate;
  aggregate.id = id;
  aggregate.sender = sender;
  aggregate.size_bytes = aggregate.remaining_bytes = stream.remaining_bytes;
  scheduler_.add_flow(aggregate);
}

void SafsTransport::ReceiverAgent::on_stream_member_complete(ReceiverFlow& flow) {
  const auto sender = static_cast<std::uint32_t>(flow.spec.src);
  const auto it = background_streams_.find(sender);
  if (it == background_streams_.end()) return;
  StreamBytes& stream = it->second;
  stream.remaining_bytes -= std::min(stream.remaining_bytes, state(flow).counted_bytes);
  const core::FlowId id = core::background_stream_id(sender);
  if (--stream.flows == 0) {
    background_streams_.erase(it);
    scheduler_.complete_flow(id, transport_.env().sim.now());
  } else {
    scheduler_.update_remaining(id, stream.remaining_bytes);
  }
}

}  // namespace safs
