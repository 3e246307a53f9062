// Transfers announced ahead, on the receiver (docs/runtime.md, "Transfers
// announced ahead"). A sender's PLAN says an urgent transfer of this size,
// for this consumer op (group), will start in so long. The scheduler keeps
// it until a short lead (ReceiverConfig::announce_lead_ps) before that
// start, then allocates it as a flow of its own and grants it ahead; the
// grant goes to the sender naming the plan's number. When the real flow's
// ANNOUNCE comes with the same group, it takes the plan's place (the
// scheduler matches it by sender and group) and is granted as any flow.
// Each peer may have PeerLimits::max_plans pending, none starting more than
// max_plan_lead_ns ahead; a plan whose flow has not come a lease after its
// start is dropped and counts against its sender's standing, as a claimed
// urgent flow that never sends does.
#include <algorithm>

#include "runtime/clock.h"
#include "runtime/receive_side.h"

namespace safs::runtime {

void ReceiveSide::on_plan(Peer& peer, const wire::Plan& plan) {
  const std::int64_t now = monotonic_ns();
  auto refuse = [&](const std::string& reason) {
    config_.log("ignoring plan " + std::to_string(plan.number) + " from " + peer.name + ": " +
                reason);
    ++stats_.plans_refused;
  };
  const PeerLimits& limits = config_.limits;
  if (peer.demoted) return refuse("its sender is demoted");
  if (plan.starts_in_ns > limits.max_plan_lead_ns) {
    return refuse("starts more than " + std::to_string(limits.max_plan_lead_ns / kNsPerMs) +
                  " ms ahead");
  }
  if (plan.size_bytes == 0 || plan.size_bytes > limits.max_message_bytes) {
    return refuse("size " + std::to_string(plan.size_bytes) + " outside 1 to " +
                  std::to_string(limits.max_message_bytes) + " bytes");
  }
  const auto pending = std::count_if(plans_.begin(), plans_.end(),
                                     [&](const PlanRecord& r) { return r.peer == peer.id; });
  if (pending >= static_cast<std::ptrdiff_t>(limits.max_plans)) {
    return refuse("more than " + std::to_string(limits.max_plans) + " plans pending");
  }
  const bool duplicate = std::any_of(plans_.begin(), plans_.end(), [&](const PlanRecord& r) {
    return r.peer == peer.id && (r.number == plan.number || r.group == plan.group);
  });
  if (duplicate) return refuse("its number or group is planned already");
  const std::int64_t start_ns = now + plan.starts_in_ns - peer.rtt_ns / 2;
  const std::int64_t deadline_ns = deadline_for(plan.slack_ns, peer, now);
  const auto sender = static_cast<std::uint32_t>(peer.id);
  core::Announcement announcement;
  announcement.planned_id = core::planned_flow_id(sender, plan.number);
  announcement.sender = sender;
  announcement.size_bytes = plan.size_bytes;
  announcement.start_ps = to_core_ps(std::max(start_ns, now));
  if (deadline_ns != kNoDeadlineNs) announcement.no_bubble_ps = to_core_ps(deadline_ns);
  announcement.dependency = plan.group;
  announcement.criticality = plan.criticality;
  const core::AnnounceOutcome outcome = scheduler_.announce(announcement, to_core_ps(now));
  if (outcome == core::AnnounceOutcome::kDropped) return refuse("the scheduler's plans are full");
  if (outcome == core::AnnounceOutcome::kInfeasible) ++stats_.plans_infeasible;
  ++stats_.plans_received;
  plans_.push_back(
      {.peer = peer.id,
       .number = plan.number,
       .group = plan.group,
       .expires_ns = std::max(start_ns, now) + from_core_ps(config_.scheduler.grants.validity_ps)});
}

bool ReceiveSide::take_plan(const Peer& peer, std::uint64_t group) {
  const auto it = std::find_if(plans_.begin(), plans_.end(), [&](const PlanRecord& r) {
    return r.peer == peer.id && r.group == group;
  });
  if (it == plans_.end()) return false;
  plans_.erase(it);
  return true;
}

// The scheduler drops such a plan at the same time, by its own clock.
void ReceiveSide::expire_plans(std::int64_t now_ns) {
  for (std::size_t i = 0; i < plans_.size();) {
    if (now_ns <= plans_[i].expires_ns) {
      ++i;
      continue;
    }
    ++stats_.plans_unused;
    if (Peer* peer = peers_.find(plans_[i].peer); peer != nullptr) {
      ++peers_.standing(*peer).urgent_claims;
      missed_claim(*peer, now_ns);
    }
    plans_.erase(plans_.begin() + static_cast<std::ptrdiff_t>(i));
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
  peers_.send(*peer, wire_grant(grant, wire::kPlanGrantBit | core::planned_number(grant.flow)));
  ++stats_.grants_sent;
}

}  // namespace safs::runtime
