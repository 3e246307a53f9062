#include "transport/safs/safs_sender_agent.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/sender_share.h"
#include "transport/safs/safs_sender_state.h"

namespace safs {

SafsTransport::SenderAgent::FlowState& SafsTransport::SenderAgent::state(const SenderFlow& flow) {
  return flow.ext<FlowState>();
}

bool SafsTransport::SenderAgent::holds_no_reference(const SenderFlow& flow) {
  return !state(flow).on_uplink_list;
}

safs_header::Semantics SafsTransport::SenderAgent::semantics(const SenderFlow& flow,
                                                             bool unscheduled) const {
  const FlowSpec& spec = flow.spec;
  // The timestamp's version travels with it, so the receiver holds (and its
  // grants echo) the version this sender last sent.
  return {.no_bubble_ps = spec.deadline_ps,
          .size_bytes = spec.size_bytes,
          .dependency = spec.dependency,
          .urgent = spec.flow_class == FlowClass::kUrgent,
          .unscheduled = unscheduled,
          .on_stream_lease = state(flow).on_stream_lease,
          .all_unscheduled = state(flow).unscheduled_limit >= spec.size_bytes,
          .window_only = state(flow).window_only,
          .background_stream = state(flow).on_background_stream,
          .criticality = spec.criticality,
          .version = state(flow).version};
}

void SafsTransport::SenderAgent::on_start(SenderFlow& flow) {
  const TransportEnv& env = transport_.env();
  flow.extension = transport_.make_extension<FlowState>();
  FlowState& s = state(flow);
  s.started_ps = env.sim.now();
  const SafsConfig& config = transport_.config_;
  // Left out of its receiver's allocation (its packets say so); they are not
  // blind bytes either, so the receiver's budget does not shrink for them:
  // strict priority keeps them below the granted flows.
  if (!config.grant_background && flow.spec.flow_class != FlowClass::kUrgent) {
    s.window_only = true;
    return;
  }
  const double bdp_bytes =
      static_cast<double>(flow.data_route.bottleneck_bps()) / 8.0 * ps_to_sec(flow.base_rtt_ps);
  s.unscheduled_limit = blind_limit(flow.spec, bdp_bytes, s.started_ps);
  // The window must not hold back the blind first BDP (nor, under a stream's
  // lease, the paced one). Under a learned cap it is raised only as far as
  // the capped blind bytes: what overflowed the receiver's port last time was
  // the start of the flows, blind or not (raised to the uncapped budget, the
  // window makes afd-shallow's p99 TPOT 2.5% worse at K = 100 KB; docs/safs.md).
  flow.cc.cwnd_bytes = std::max<std::uint64_t>(flow.cc.cwnd_bytes, s.unscheduled_limit);
  // Under blind_cap_as_window a flow sent whole starts with at most its
  // learned cap in flight; its ACKs clock the rest out.
  if (s.unscheduled_limit >= flow.spec.size_bytes) {
    flow.cc.cwnd_bytes = std::min(flow.cc.cwnd_bytes, blind_window(flow.spec.dst, s.started_ps));
  }
  // A flow that fits in its blind first BDP needs no grant at all.
  const bool needs_grant = s.unscheduled_limit < flow.spec.size_bytes;
  if (needs_grant && config.background_streams && flow.spec.flow_class != FlowClass::kUrgent) {
    join_background_stream(flow, s.started_ps);
    return;
  }
  const bool planned = take_planned_grant(flow, needs_grant, s.started_ps);
  if (needs_grant && (planned || take_stream_lease(flow, s.started_ps))) s.unscheduled_limit = 0;
}

std::uint64_t SafsTransport::SenderAgent::blind_limit(const FlowSpec& spec, double bdp_bytes,
                                                      TimePs now) const {
  const SafsConfig& config = transport_.config_;
  std::uint64_t limit = 0;
  if (config.unscheduled_bytes != 0) {
    limit = std::min(config.unscheduled_bytes, spec.size_bytes);
  } else {  // one bandwidth-delay product of this flow's path, or a short urgent flow whole
    const bool urgent = spec.flow_class == FlowClass::kUrgent;
    limit =
        core::blind_bytes(spec.size_bytes, bdp_bytes, urgent ? config.whole_flow_blind_bdps : 1.0);
  }
  // Under blind_cap_as_window a flow that goes whole keeps going whole: the
  // cap bounds its window instead (blind_window).
  if (config.learn_blind_budget && !(config.blind_cap_as_window && limit >= spec.size_bytes)) {
    const auto it = blind_budgets_.find(spec.dst);
    if (it != blind_budgets_.end()) {
      limit = std::min(limit, it->second.cap_bytes(config.blind_budget, now));
    }
  }
  return limit;
}

std::uint64_t SafsTransport::SenderAgent::blind_window(int receiver, TimePs now) const {
  const SafsConfig& config = transport_.config_;
  if (!config.learn_blind_budget || !config.blind_cap_as_window) return core::BlindBudget::kNoCap;
  const auto it = blind_budgets_.find(receiver);
  return it == blind_budgets_.end() ? core::BlindBudget::kNoCap
                                    : it->second.cap_bytes(config.blind_budget, now);
}

// Only a transfer that will need a grant is announced: one sent whole blind
// gets none, and its plan would hold rate for nothing.
void SafsTransport::SenderAgent::announce(const FlowSpec& planned) {
  TransportEnv& env = transport_.env();
  const TimePs now = env.sim.now();
  const TimePs starts_in_ps = planned.start_ps - now;
  if (planned.flow_class != FlowClass::kUrgent || planned.dependency == 0 ||
      planned.src == planned.dst || starts_in_ps < 0 ||
      starts_in_ps > safs_header::kMaxAnnounceLeadPs) {
    return;
  }
  const Route& data = transport_.host_route(planned.src, planned.dst);
  const TimePs rtt_ps =
      data.packet_latency_ps(env.mtu_bytes + env.header_bytes) +
      transport_.host_route(planned.dst, planned.src).packet_latency_ps(env.header_bytes);
  const double bdp_bytes = static_cast<double>(data.bottleneck_bps()) / 8.0 * ps_to_sec(rtt_ps);
  if (blind_limit(planned, bdp_bytes, planned.start_ps) >= planned.size_bytes) return;
  // Announcements whose transfer never started have lapsed: forget them; and
  // keep at most kMaxAnnounced, the oldest going first.
  const TimePs lease_ps = transport_.config_.receiver.grants.validity_ps;
  std::erase_if(announced_, [&](const Announced& a) { return now > a.start_ps + lease_ps; });
  if (announced_.size() >= kMaxAnnounced) announced_.erase(announced_.begin());
  const std::uint32_t number = next_announcement_++ & safs_header::kAnnouncementMask;
  announced_.push_back({number, planned.dst, planned.dependency, planned.start_ps, {}});
  Packet& packet = transport_.new_host_message(host_, planned.dst, safs_header::kAnnounce);
  safs_header::put_announcement(packet, {.no_bubble_ps = planned.deadline_ps,
                                         .size_bytes = planned.size_bytes,
                                         .dependency = planned.dependency,
                                         .starts_in_ps = starts_in_ps,
                                         .number = number});
  transport_.send_host_message(packet);
}

void SafsTransport::SenderAgent::on_planned_grant(const Packet& packet) {
  const std::uint32_t number = safs_header::planned_grant_number(packet);
  const auto from = static_cast<int>(packet.src_host);
  for (Announced& a : announced_) {
    if (a.number == number && a.receiver == from) {
      a.grant.accept(safs_header::get_grant(packet), transport_.env().sim.now());
      return;
    }
  }
}

// The announcement's entry goes whether or not the flow can use its grant.
// A flow that starts more than half a lease after its projected start goes
// blind instead: its receiver drops the plan a lease after that start (by
// its own clock, later than ours), and the flow's first packet must reach it
// before then, or the receiver would not know the rate it is sending at.
bool SafsTransport::SenderAgent::take_planned_grant(SenderFlow& flow, bool needs_grant,
                                                    TimePs now) {
  if (announced_.empty()) return false;
  const auto it = std::find_if(announced_.begin(), announced_.end(), [&](const Announced& a) {
    return a.receiver == flow.spec.dst && a.dependency == flow.spec.dependency;
  });
  if (it == announced_.end()) return false;
  const core::GrantHolder grant = it->grant;
  const bool in_time = now < it->start_ps + transport_.config_.receiver.grants.validity_ps / 2;
  announced_.erase(it);
  const bool under_plan = needs_grant && in_time && grant.active(now) && start_under(flow, grant);
  if (under_plan) ++flows_on_plans_;
  return under_plan;
}

bool SafsTransport::SenderAgent::take_stream_lease(SenderFlow& flow, TimePs now) {
  if (!transport_.config_.stream_leases || flow.spec.flow_class != FlowClass::kUrgent) return false;
  std::erase_if(stream_leases_, [now](const StreamLease& l) { return !l.grant.active(now); });
  const auto it = std::find_if(stream_leases_.begin(), stream_leases_.end(),
                               [&](const StreamLease& l) { return l.receiver == flow.spec.dst; });
  if (it == stream_leases_.end() || !start_under(flow, it->grant)) return false;
  stream_leases_.erase(it);
  return true;
}

bool SafsTransport::SenderAgent::start_under(SenderFlow& flow, const core::GrantHolder& grant) {
  FlowState& s = state(flow);
  s.grant = grant;
  s.on_uplink_list = true;
  sending_flows_.push_back(flow.spec.id);
  rebalance_uplink();
  // Held back behind this host's other flows, it would sit on the lease
  // unannounced: start it blind instead, and leave the lease to the stream.
  if (std::min(s.grant.grant().rate_bps, s.uplink_available_bps) < 1.0) {
    std::erase(sending_flows_, flow.spec.id);
    s.on_uplink_list = false;
    s.grant = core::GrantHolder{};
    s.uplink_available_bps = kNoLimit;
    rebalance_uplink();
    return false;
  }
  s.on_stream_lease = true;
  return true;
}

void SafsTransport::SenderAgent::on_complete(SenderFlow& flow) {
  const TimePs now = transport_.env().sim.now();
  const FlowState& s = state(flow);
  // A pause (rate 0) is not worth keeping: the receiver keeps no rate for it.
  if (transport_.config_.stream_leases && flow.spec.flow_class == FlowClass::kUrgent &&
      s.grant.active(now) && s.grant.grant().rate_bps >= 1.0) {
    std::erase_if(stream_leases_, [&](const StreamLease& l) {
      return l.receiver == flow.spec.dst || !l.grant.active(now);
    });
    stream_leases_.push_back({flow.spec.dst, s.grant});
  }
  leave_background_stream(flow);
  rebalance_uplink();
}

WindowTransport::SendGate SafsTransport::SenderAgent::gate(SenderFlow& flow) {
  const SafsConfig& config = transport_.config_;
  FlowState& s = state(flow);
  const TimePs now = transport_.env().sim.now();
  if (s.window_only) return {true, config.fallback_priority};
  // The next new byte decides: with SACK a resend comes from the scoreboard
  // and goes as the flow's later bytes do, not at the blind level again,
  // where it would add to the overflow that lost it.
  const std::uint64_t next_byte = flow.retransmit_pending ? flow.snd_una : flow.snd_nxt;
  if (next_byte < s.unscheduled_limit) {
    const bool urgent = flow.spec.flow_class == FlowClass::kUrgent;
    return {true,
            urgent ? config.unscheduled_urgent_priority : config.unscheduled_background_priority};
  }
  if (s.on_background_stream) return stream_gate(flow, now);
  if (s.grant.active(now)) {
    const double rate = paced_rate_bps(flow, s);
    if (rate < 1.0) return {false, 0, s.grant.expires_ps()};  // paused until a new grant
    if (s.next_send_ps > now) return {false, 0, s.next_send_ps};
    return {true, s.grant.grant().priority};
  }
  // A flow that started under its stream's lease and outlived it waits for
  // its own first grant as a new flow does (the receiver may not know it yet).
  // A flow sent whole blind waits for none: its receiver never grants it, so
  // its resends go at once (they waited first_grant_wait_us in vain before).
  const bool grant_coming = s.unscheduled_limit < flow.spec.size_bytes &&
                            (!s.grant.held() || (s.on_stream_lease && !s.granted));
  if (grant_coming && now < s.started_ps + config.first_grant_wait_ps) {
    return {false, 0, s.started_ps + config.first_grant_wait_ps};  // the grant is on its way
  }
  return {true, config.fallback_priority};  // lost or expired lease: window only, lowest level
}

void SafsTransport::SenderAgent::on_segment_sent(SenderFlow& flow, Packet& packet) {
  FlowState& s = state(flow);
  const bool unscheduled = packet.seq < s.unscheduled_limit;
  safs_header::put_semantics(packet, semantics(flow, unscheduled));
  const TimePs now = transport_.env().sim.now();
  // New data starts where the highest byte sent ended; anything below is a
  // resend, and a resent blind byte was lost (or timed out) on its way.
  if (unscheduled && packet.seq < s.sent_end_bytes && !s.blind_loss_counted) {
    s.blind_loss_counted = true;
    if (transport_.config_.learn_blind_budget) {
      blind_budgets_[flow.spec.dst].on_blind_loss(transport_.config_.blind_budget,
                                                  s.unscheduled_limit, now);
    }
  }
  s.sent_end_bytes = std::max(s.sent_end_bytes, packet.seq + packet.payload_bytes);
  if (unscheduled) return;
  if (s.on_background_stream) {
    on_stream_sent(flow, packet, now);
    return;
  }
  if (!s.grant.active(now)) return;
  const double rate = paced_rate_bps(flow, s);
  const TimePs gap = serialization_ps(packet.wire_bytes, static_cast<std::uint64_t>(rate));
  s.next_send_ps = std::max(now, s.next_send_ps) + gap;
  s.grant.on_sent(packet.payload_bytes);
}

// With rate_within_window the grant is an upper bound and the window decides
// within it: congestion no receiver sees (a fabric link that ECMP shares
// between receivers' flows) cuts the window, and so the rate. Paced at the
// grant alone, a flow's window floats above what it has in flight, so marks
// and losses do not slow it: on a fat tree its granted background fills the
// aggregation ports and the urgent packets crossing them drop
// (bench/README.md, "A 1024-GPU cluster").
double SafsTransport::SenderAgent::paced_rate_bps(const SenderFlow& flow,
                                                  const FlowState& s) const {
  const double rate = std::min(s.grant.grant().rate_bps, s.uplink_available_bps);
  // Before the first RTT sample the start-up window bounds what is in flight.
  if (!transport_.config_.rate_within_window || flow.srtt_ps == 0) return rate;
  return std::min(rate, static_cast<double>(flow.cc.cwnd_bytes) * 8.0 / ps_to_sec(flow.srtt_ps));
}

void SafsTransport::SenderAgent::on_deadline_changed(SenderFlow& flow) {
  // A flow under its window alone has no receiver state to update.
  if (flow.done() || state(flow).window_only) return;
  FlowState& s = state(flow);
  s.version = (s.version + 1) & safs_header::kVersionMask;
  send_meta(flow);
}

void SafsTransport::SenderAgent::send_meta(SenderFlow& flow) {
  Packet& meta =
      transport_.new_control(flow, safs_header::kMeta, transport_.config_.control_priority);
  safs_header::put_semantics(meta, semantics(flow, false));
  transport_.send_control(flow, meta);
}

void SafsTransport::SenderAgent::send_report(SenderFlow& flow, double achievable_bps) {
  Packet& report =
      transport_.new_control(flow, safs_header::kReport, transport_.config_.control_priority);
  safs_header::put_report(report, achievable_bps);
  core::note_sent(state(flow).report, achievable_bps, transport_.env().sim.now(),
                  transport_.config_.uplink_report);
  transport_.send_control(flow, report);
}

// Grants to this host's flows may ask more of its uplink than it has. Serve
// them in slack order and tell each receiver what its flow can really get.
void SafsTransport::SenderAgent::rebalance_uplink() {
  std::vector<std::uint32_t>& ids = sending_flows_;
  std::erase_if(ids, [this](std::uint32_t id) {
    const SenderFlow& flow = *transport_.sender_flow(id);
    if (flow.done()) state(flow).on_uplink_list = false;
    return flow.done();
  });
  const TimePs now = transport_.env().sim.now();
  const double uplink = static_cast<double>(transport_.env().net.nic(host_).link().rate_bps);
  std::vector<core::SenderFlow>& flows = uplink_flows_;
  flows.clear();
  for (const std::uint32_t id : ids) {
    const SenderFlow& flow = *transport_.sender_flow(id);
    const FlowState& s = state(flow);
    const FlowSpec& spec = flow.spec;
    const double granted = s.grant.active(now) ? s.grant.grant().rate_bps : 0.0;
    flows.push_back(core::sender_flow(id, granted, spec.flow_class == FlowClass::kUrgent,
                                      spec.has_deadline() ? spec.deadline_ps : kTimeNever,
                                      spec.size_bytes - flow.snd_una, uplink, now));
  }
  std::vector<double>& available = uplink_available_bps_;
  std::vector<TimePs>& waits = uplink_waits_ps_;
  core::uplink_shares(flows, uplink, uplink_order_, available, waits,
                      transport_.config_.uplink_share);
  TimePs deferred_until = kTimeNever;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    SenderFlow& flow = *transport_.sender_flow(ids[i]);
    FlowState& s = state(flow);
    const double before = s.uplink_available_bps;
    s.uplink_available_bps = available[i] >= uplink ? kNoLimit : available[i];
    if (s.uplink_available_bps > before) {  // it may send again, or faster
      flow.retry_timer->cancel();
      s.next_send_ps = std::min(s.next_send_ps, now);
      transport_.make_ready(flow);
    }
    const core::ReportDecision decision =
        core::decide_report(s.report, s.uplink_available_bps, flows[i].granted_bps, waits[i],
                            uplink, transport_.config_.uplink_report, now);
    if (decision.action == core::ReportDecision::Action::kWait) {
      deferred_until = std::min(deferred_until, s.report.next_report_ps);
    } else if (decision.action == core::ReportDecision::Action::kSend) {
      send_report(flow, decision.rate_bps);
    }
  }
  // The latest share goes when the pause ends, unless a rebalance sends it first.
  if (deferred_until != kTimeNever &&
      (!report_timer_.armed() || report_timer_.deadline() > deferred_until)) {
    report_timer_.arm_at(deferred_until);
  }
}

void SafsTransport::SenderAgent::on_grant(SenderFlow& flow, const Packet& packet) {
  const SafsConfig& config = transport_.config_;
  const TransportEnv& env = transport_.env();
  const TimePs now = env.sim.now();
  FlowState& s = state(flow);
  if (flow.done() || s.window_only || !s.grant.accept(safs_header::get_grant(packet), now)) {
    return;  // over, never granted by design, or a stale grant
  }
  s.granted = true;
  // The receiver holds an older timestamp: the META was lost. Again.
  if (safs_header::grant_known_version(packet) != s.version) send_meta(flow);
  // The receiver grants more than this sender said it can give: the report
  // was lost. Again. Without the test of the grant's age, one report in three
  // under web-search background was such a needless repeat (docs/safs.md).
  if (core::report_was_lost(s.report, s.grant.grant().rate_bps, now,
                            config.receiver.grants.control_delay_ps, config.uplink_report)) {
    send_report(flow, s.report.reported_bps);
  }
  // A new rate acts now: do not keep a gap computed for a lower one.
  const double rate = std::max(1.0, s.grant.grant().rate_bps);
  // The grant is an explicit signal of receiver capacity: let the window
  // slow-start up to the granted bandwidth-delay product (twice, for jitter)
  // instead of creeping there one MTU per RTT after an old cut. Marks from
  // the fabric still cut it.
  const auto granted_window =
      static_cast<std::uint64_t>(2.0 * rate / 8.0 * ps_to_sec(std::max(flow.srtt_ps, kPsPerUs)));
  flow.cc.ssthresh_bytes = std::max(flow.cc.ssthresh_bytes, granted_window);
  s.next_send_ps = std::min(
      s.next_send_ps,
      now + serialization_ps(env.mtu_bytes + env.header_bytes, static_cast<std::uint64_t>(rate)));
  if (!s.on_uplink_list) {
    s.on_uplink_list = true;
    sending_flows_.push_back(flow.spec.id);
  }
  rebalance_uplink();
  flow.retry_timer->cancel();
  transport_.make_ready(flow);
}

}  // namespace safs
