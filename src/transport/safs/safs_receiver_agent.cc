#include "transport/safs/safs_receiver_agent.h"

#include <algorithm>

namespace safs {

struct SafsTransport::ReceiverAgent::FlowState final : FlowExtension {
  std::uint32_t known_version = 0;  // of the flow's timestamp
  bool on_background_stream = false;
  std::uint64_t counted_bytes = 0;  // its remaining wire bytes, as its stream counts them
  bool ignored_seen = false;        // a packet of it arrived that the scheduler ignores
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
  const TransportEnv& env = transport_.env();
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
    const auto id = static_cast<std::uint32_t>(grant.flow);
    ReceiverFlow* flow = transport_.receiver_flow(id);
    if (flow == nullptr || flow->complete) continue;
    Packet& packet =
        transport_.new_control(*flow, safs_header::kGrant, transport_.config_.control_priority);
    safs_header::put_grant(packet, grant, state(*flow).known_version);
    transport_.send_control(*flow, packet);
    const GrantObserver* observer = env.on_grant_sent;
    if (observer != nullptr && *observer) (*observer)(env.sim.now(), id, grant.rate_bps, host_);
  }
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
