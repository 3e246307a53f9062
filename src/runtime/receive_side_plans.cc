// Transfers announced ahead, on the receiver (docs/runtime.md, "Transfers
// announced ahead"). A sender's PLAN says an urgent transfer of this size,
// for this consumer op (group), will start in so long. The scheduler keeps
// it until a short lead (ReceiverConfig::announce_lead_ps) before that
// start, then allocates it as a flow of its own and grants it ahead; the
// grant goes to the sender naming the plan's number. When the real flow's
// ANNOUNCE comes with the same group, it takes the plan's place (the
// scheduler matches it by sender and group) and is granted as any flow.
// Each identity may have PeerLimits::max_plans pending, none starting more
// than max_plan_lead_ns ahead. A plan that does not serve what it reserved
// (its flow never comes, comes as background, or at less than half the
// size) counts against its sender's standing, as a claimed urgent flow
// that never sends does.
#include <algorithm>

#include "runtime/clock.h"
#include "runtime/receive_side.h"

namespace safs::runtime {
namespace {

// core::planned_flow_id keeps 31 bits for the sender.
constexpr PeerId kMaxPlanningPeer = (PeerId{1} << 31) - 1;

}  // namespace

void ReceiveSide::on_plan(Peer& peer, const wire::Plan& plan) {
  const std::int64_t now = monotonic_ns();
  auto refuse = [&](const std::string& reason) {
    ++stats_.plans_refused;
    if (now < next_plan_log_ns_) return;  // a flood of them is counted, not logged
    next_plan_log_ns_ = now + kNsPerSecond;
    config_.log("ignoring plan " + std::to_string(plan.number) + " from " + peer.name + ": " +
                reason + " (at most one such line a second)");
  };
  const PeerLimits& limits = config_.limits;
  if (peer.demoted) return refuse("its sender is demoted");
  if (peer.id > kMaxPlanningPeer) return refuse("peer numbers past 2^31 cannot plan");
  if (plan.starts_in_ns > limits.max_plan_lead_ns) {
    return refuse("starts more than " + std::to_string(limits.max_plan_lead_ns / kNsPerMs) +
                  " ms ahead");
  }
  if (plan.size_bytes == 0 || plan.size_bytes > limits.max_message_bytes) {
    return refuse("size " + std::to_string(plan.size_bytes) + " outside 1 to " +
                  std::to_string(limits.max_message_bytes) + " bytes");
  }
  const auto pending = std::count_if(plans_.begin(), plans_.end(), [&](const PlanRecord& r) {
    return r.identity == peer.identity;
  });
  if (pending >= static_cast<std::ptrdiff_t>(limits.max_plans)) {
    return refuse("more than " + std::to_string(limits.max_plans) + " plans pending");
  }
  const bool duplicate = std::any_of(plans_.begin(), plans_.end(), [&](const PlanRecord& r) {
    return r.peer == peer.id && (r.number == plan.number || r.group == plan.group);
  });
  if (duplicate) return refuse("its number or group is planned already");
  // The start on this host's clock (the Plan took half an RTT to come),
  // taken a control RTT early: the planned grant must cross the same path
  // back, queues included (its smoothed RTT), before the flow starts.
  const std::int64_t start_ns =
      std::max(now, now + plan.starts_in_ns - peer.rtt_ns / 2 - peer.rtt_ns);
  const std::int64_t deadline_ns = deadline_for(plan.slack_ns, peer, now);
  const auto sender = static_cast<std::uint32_t>(peer.id);
  core::Announcement announcement;
  announcement.planned_id = core::planned_flow_id(sender, plan.number);
  announcement.sender = sender;
  announcement.size_bytes = plan.size_bytes;
  announcement.start_ps = to_core_ps(start_ns);
  if (deadline_ns != kNoDeadlineNs) announcement.no_bubble_ps = to_core_ps(deadline_ns);
  announcement.dependency = plan.group;
  announcement.criticality = plan.criticality;
  const core::AnnounceOutcome outcome = scheduler_.announce(announcement, to_core_ps(now));
  if (outcome == core::AnnounceOutcome::kDropped) return refuse("the scheduler's plans are full");
  if (outcome == core::AnnounceOutcome::kInfeasible) {
    ++stats_.plans_infeasible;
    if (advertises(peer, wire::kCapPlanWarnings)) {
      peers_.send(peer, wire::PlanWarning{plan.number});
      ++stats_.plan_warnings_sent;
    }
  }
  ++stats_.plans_received;
  plans_.push_back({.peer = peer.id,
                    .identity = peer.identity,
                    .number = plan.number,
                    .group = plan.group,
                    .size_bytes = plan.size_bytes,
                    .expires_ns = start_ns + from_core_ps(config_.scheduler.grants.validity_ps)});
}

// The scheduler replaces the plan by an urgent flow itself
// (core::ReceiverScheduler::replace_plan); a background or held one it does
// not, so the plan is dropped here. A flow started under its plan's grant
// (IncomingFlow::on_plan) is granted afresh, not handed the plan's lease as
// the simulator does (SemanticFlow::on_stream_lease): in the real pipeline
// next to a bulk flow that measured worse (docs/runtime.md, "Transfers
// announced ahead").
bool ReceiveSide::match_plan(Peer& peer, IncomingFlow& flow, bool urgent, bool sent_on_plan,
                             std::int64_t now_ns) {
  const std::uint64_t group = flow.announce.group;
  if (group == 0) return false;
  const auto it = std::find_if(plans_.begin(), plans_.end(), [&](const PlanRecord& r) {
    return r.peer == peer.id && r.group == group;
  });
  if (it == plans_.end()) return false;
  const PlanRecord plan = *it;
  plans_.erase(it);
  if (!urgent) scheduler_.forget_announcement(static_cast<std::uint32_t>(peer.id), group);
  // It sends at its planned grant from its first byte, as if granted now.
  flow.on_plan = urgent && sent_on_plan && plan.granted_bps > 0;
  if (flow.on_plan) {
    flow.granted = true;
    flow.granted_bps = plan.granted_bps;
    flow.first_grant_ns = now_ns;
    flow.overrun.on_grant(plan.granted_bps, now_ns);
  }
  return flow.announce.urgent == 0 || flow.announce.size_bytes < plan.size_bytes / 2;
}

void ReceiveSide::plan_missed(Peer& peer, bool count_claim, std::int64_t now_ns) {
  ++stats_.plans_unused;
  if (count_claim) ++peers_.standing(peer).urgent_claims;
  missed_claim(peer, now_ns);
}

// The scheduler drops such a plan at the same time, by its own clock.
void ReceiveSide::expire_plans(std::int64_t now_ns) {
  for (std::size_t i = 0; i < plans_.size();) {
    if (now_ns <= plans_[i].expires_ns) {
      ++i;
      continue;
    }
    const PeerId id = plans_[i].peer;
    plans_.erase(plans_.begin() + static_cast<std::ptrdiff_t>(i));
    if (Peer* peer = peers_.find(id); peer != nullptr) plan_missed(*peer, true, now_ns);
  }
}

void ReceiveSide::forget_plans_from(PeerId peer) {
  std::erase_if(plans_, [&](const PlanRecord& r) {
    if (r.peer != peer) return false;
    scheduler_.forget_announcement(static_cast<std::uint32_t>(peer), r.group);
    return true;
  });
}

void ReceiveSide::send_planned_grant(const core::Grant& grant) {
  Peer* peer = peers_.find(core::planned_sender(grant.flow));
  if (peer == nullptr) return;
  for (PlanRecord& r : plans_) {
    if (r.peer == peer->id && r.number == core::planned_number(grant.flow)) {
      r.granted_bps = grant.rate_bps;
    }
  }
  peers_.send(*peer, wire_grant(grant, wire::kPlanGrantBit | core::planned_number(grant.flow)));
  ++stats_.grants_sent;
}

}  // namespace safs::runtime
