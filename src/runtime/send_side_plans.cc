// Transfers announced ahead (docs/runtime.md, "Transfers announced ahead").
// The application knows its compute schedule: which urgent transfer it will
// send to whom, how large, and when. A Plan tells the receiver that much
// before the bytes exist; the receiver reserves the transfer's rate from a
// short lead before its start and grants it ahead (core::ReceiverScheduler::
// announce). The flow that send() then starts to that receiver with the same
// group takes the planned grant: it is paced at its rate and priority from
// its first byte, with no unscheduled burst and no wait for a first grant.
// The receiver grants the real flow as usual once its Announce arrives. The
// simulator's SAFS sender does the same (safs_sender_agent.cc, announce).
#include <algorithm>

#include "runtime/clock.h"
#include "runtime/send_side.h"

namespace safs::runtime {

core::Grant lease_of(const wire::Grant& grant) {
  constexpr std::uint64_t kHourNs = 3600 * kNsPerSecond;
  core::Grant lease;
  lease.flow = grant.flow;
  lease.rate_bps = static_cast<double>(grant.rate_bps);
  lease.priority = grant.priority;
  lease.epoch = grant.epoch;
  lease.valid_for_ps = to_core_ps(static_cast<std::int64_t>(std::min(grant.lease_ns, kHourNs)));
  lease.byte_cap = grant.byte_cap;
  return lease;
}

std::int64_t SendSide::lease_ns(const PlannedTransfer& plan) const {
  return from_core_ps(plan.grant.held() ? plan.grant.grant().valid_for_ps
                                        : config_.scheduler.grants.validity_ps);
}

bool SendSide::announce_ahead(const PeerAddress& address, std::uint64_t size_bytes,
                              std::int64_t start_ns, const FlowHint& hint, std::string* why_not) {
  auto refuse = [&](const std::string& why) {
    if (why_not != nullptr) *why_not = why;
    return false;
  };
  const std::int64_t now = monotonic_ns();
  if (!hint.urgent) return refuse("only urgent transfers are planned");
  if (hint.group == 0) return refuse("a plan needs a group: its flow is matched by it");
  if (size_bytes == 0) return refuse("a plan needs a size");
  if (start_ns < now) return refuse("the transfer's start has passed");
  if (start_ns - now > config_.limits.max_plan_lead_ns) {
    return refuse("the transfer starts more than " +
                  std::to_string(config_.limits.max_plan_lead_ns / kNsPerMs) + " ms ahead");
  }
  std::string error;
  Peer* peer = peers_.connect(address, error);
  if (peer == nullptr) return refuse(error);
  if (peer->authenticated && !advertises(*peer, wire::kCapPlans)) {
    return refuse("peer " + peer->name + " does not read plans");
  }
  expire_plans(now);
  if (plans_.size() >= kMaxPlans) {
    return refuse("more than " + std::to_string(kMaxPlans) + " plans pending");
  }
  plans_.push_back({.number = next_plan_number_++,
                    .peer = peer->id,
                    .size_bytes = size_bytes,
                    .start_ns = start_ns,
                    .hint = hint});
  if (peer->authenticated) send_plan(plans_.back(), *peer, now);
  return true;
}

void SendSide::send_plan(PlannedTransfer& plan, Peer& peer, std::int64_t now_ns) {
  wire::Plan message;
  message.number = plan.number;
  message.size_bytes = plan.size_bytes;
  message.starts_in_ns = std::max<std::int64_t>(0, plan.start_ns - now_ns);
  message.slack_ns = slack_for(plan.hint.deadline_ns, now_ns);
  message.criticality = plan.hint.criticality;
  message.group = plan.hint.group;
  peers_.send(peer, message);
  plan.sent = true;
  ++stats_.plans_sent;
}

// Plans made before the peer's Hello came go now, if it reads them; to a
// peer that does not, they are dropped (and counted).
void SendSide::send_waiting_plans(Peer& peer, std::int64_t now_ns) {
  std::erase_if(plans_, [&](const PlannedTransfer& plan) {
    const bool dropped = plan.peer == peer.id && !plan.sent && !advertises(peer, wire::kCapPlans);
    if (dropped) ++stats_.plans_dropped;
    return dropped;
  });
  for (PlannedTransfer& plan : plans_) {
    if (plan.peer == peer.id && !plan.sent) send_plan(plan, peer, now_ns);
  }
}

void SendSide::on_planned_grant(const Peer& peer, const wire::Grant& grant) {
  const auto number = static_cast<std::uint32_t>(grant.flow & ~wire::kPlanGrantBit);
  for (PlannedTransfer& plan : plans_) {
    if (plan.peer == peer.id && plan.number == number) {
      if (plan.grant.accept(lease_of(grant), to_core_ps(monotonic_ns()))) ++stats_.grants_received;
      return;
    }
  }
}

// Usually before its flow exists (the receiver warns as the plan comes);
// a warning that finds its flow started already names that flow.
void SendSide::on_plan_warning(const Peer& peer, const wire::PlanWarning& warning) {
  FlowRisk risk;
  const auto plan = std::find_if(plans_.begin(), plans_.end(), [&](const PlannedTransfer& p) {
    return p.peer == peer.id && p.number == warning.number;
  });
  if (plan != plans_.end()) {
    if (plan->warned) return;
    plan->warned = true;
    risk.tag = plan->hint.tag;
  } else {
    const auto flow = std::find_if(outgoing_.begin(), outgoing_.end(), [&](const auto& entry) {
      return entry.second.peer == peer.id && entry.second.plan_number == warning.number;
    });
    // An expired plan, or one never made: nothing to report.
    if (flow == outgoing_.end() || flow->second.plan_warned) return;
    flow->second.plan_warned = true;
    risk.flow = flow->second.id;
    risk.tag = flow->second.hint.tag;
  }
  ++stats_.plan_warnings_received;
  if (!risk_handler_) return;
  risk.reported_at_ns = monotonic_ns();
  risk.planned = true;
  risk_handler_(risk);
}

// A plan whose transfer never started is dropped by its receiver a lease
// after its projected start; so is ours.
void SendSide::expire_plans(std::int64_t now_ns) {
  std::erase_if(
      plans_, [&](const PlannedTransfer& plan) { return now_ns > plan.start_ns + lease_ns(plan); });
}

// The plan's entry goes whether or not the flow can use its grant. A flow
// that starts more than half a lease less a control RTT after its projected
// start goes as an unplanned one: its receiver drops the plan a lease after
// that start, less one and a half RTTs (it plans an RTT early, by its own
// clock), and the flow's Announce must reach it before then. So
// does one that starts before its planned grant came (its op ended early):
// it is not held back for the grant.
void SendSide::take_plan(OutgoingFlow& flow, std::int64_t now_ns) {
  if (plans_.empty() || !flow.hint.urgent || flow.hint.group == 0) return;
  const auto it = std::find_if(plans_.begin(), plans_.end(), [&](const PlannedTransfer& plan) {
    return plan.peer == flow.peer && plan.hint.group == flow.hint.group;
  });
  if (it == plans_.end()) return;
  const core::GrantHolder grant = it->grant;
  const Peer* peer = peers_.find(flow.peer);
  const std::int64_t rtt_ns = peer != nullptr ? peer->rtt_ns : 0;
  const bool in_time = now_ns < it->start_ns + lease_ns(*it) / 2 - rtt_ns;
  flow.plan_number = it->number;
  flow.plan_warned = it->warned;
  plans_.erase(it);
  if (!in_time || !grant.active(to_core_ps(now_ns))) return;
  flow.grant = grant;
  flow.on_plan = true;
  ++stats_.flows_on_plans;
}

}  // namespace safs::runtime
