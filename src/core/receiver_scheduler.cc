#include "core/receiver_scheduler.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace safs::core {

SemanticFlow* ReceiverScheduler::find(FlowId id) {
  for (SemanticFlow& f : flows_) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

const SemanticFlow* ReceiverScheduler::find(FlowId id) const {
  for (const SemanticFlow& f : flows_) {
    if (f.id == id) return &f;
  }
  return nullptr;
}

void ReceiverScheduler::add_flow(const SemanticFlow& flow) {
  if (SemanticFlow* known = find(flow.id)) {
    *known = flow;
  } else {
    replace_plan(flow);
    flows_.push_back(flow);
    // Started under its stream's lease: it is sending at the stream's rate.
    if (flow.on_stream_lease && flow.stream != 0) issuer_.adopt(flow.id, flow.stream);
  }
  dirty_ = true;
}

AnnounceOutcome ReceiverScheduler::announce(const Announcement& announcement, TimePs now) {
  ++announcements_received_;
  if (announcements_pending() >= config_.max_announcements) {
    ++announcements_dropped_;
    return AnnounceOutcome::kDropped;
  }
  const bool feasible = urgent_set_feasible(announcement, now);
  announced_.push_back(announcement);
  announced_.back().warned = !feasible;
  if (announcement.start_ps - config_.announce_lead_ps <= now) dirty_ = true;
  if (feasible) return AnnounceOutcome::kPlanned;
  ++announcements_infeasible_;
  return AnnounceOutcome::kInfeasible;
}

// Its sender started it under the plan's lease (on_stream_lease), or blind:
// either way the plan has done its work, and what it reserved is the flow's.
void ReceiverScheduler::replace_plan(const SemanticFlow& flow) {
  if (!flow.urgent()) return;
  // Back after set_aside_flow: it replaced its plan when it first came.
  const auto replaced = [&](const AnnouncedFlow& a) { return a.id == flow.id; };
  if (std::any_of(announced_flows_.begin(), announced_flows_.end(), replaced)) return;
  if (const Announcement* a = find_announcement(flow.sender, flow.dependency)) {
    announced_flows_.push_back({flow.id, a->warned, a->no_bubble_ps});
  }
  drop_plan(flow.sender, flow.dependency, flow.on_stream_lease ? flow.id : kNoFlow);
}

const Announcement* ReceiverScheduler::find_announcement(std::uint32_t sender,
                                                         std::uint64_t dependency) const {
  if (dependency == 0) return nullptr;
  for (const std::vector<Announcement>* list : {&planned_, &announced_}) {
    for (const Announcement& a : *list) {
      if (a.sender == sender && a.dependency == dependency) return &a;
    }
  }
  return nullptr;
}

void ReceiverScheduler::forget_announcement(std::uint32_t sender, std::uint64_t dependency) {
  drop_plan(sender, dependency, kNoFlow);
}

void ReceiverScheduler::drop_plan(std::uint32_t sender, std::uint64_t dependency, FlowId heir) {
  if (dependency == 0 || (announced_.empty() && planned_.empty())) return;
  const auto same = [&](const Announcement& a) {
    return a.sender == sender && a.dependency == dependency;
  };
  std::erase_if(announced_, same);
  const auto plan = std::find_if(planned_.begin(), planned_.end(), same);
  if (plan == planned_.end()) return;
  if (heir != kNoFlow) issuer_.hand_over(plan->planned_id, heir);
  remove_flow(plan->planned_id);
  planned_.erase(plan);
}

void ReceiverScheduler::plan_announcements(TimePs now) {
  // Not started a lease after its projected start: a grant for it would
  // have lapsed unused by now, so it is given up, planned or not.
  const auto given_up = [&](const Announcement& a) {
    return now >= a.start_ps + config_.grants.validity_ps;
  };
  for (std::size_t i = 0; i < announced_.size();) {
    const Announcement& a = announced_[i];
    if (!given_up(a) && a.start_ps - config_.announce_lead_ps > now) {
      ++i;
      continue;
    }
    if (given_up(a)) {
      ++announcements_given_up_;
    } else {
      SemanticFlow f;
      f.id = a.planned_id;
      f.sender = a.sender;
      f.size_bytes = f.remaining_bytes = a.size_bytes;
      f.no_bubble_ps = a.no_bubble_ps;
      f.dependency = a.dependency;
      f.urgency = Urgency::kUrgent;
      f.criticality = a.criticality;
      flows_.push_back(f);
      planned_.push_back(a);
      dirty_ = true;
    }
    announced_.erase(announced_.begin() + static_cast<std::ptrdiff_t>(i));
  }
  for (std::size_t i = 0; i < planned_.size();) {
    if (given_up(planned_[i])) {
      ++announcements_given_up_;
      remove_flow(planned_[i].planned_id);
      planned_.erase(planned_.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      ++i;
    }
  }
}

bool ReceiverScheduler::urgent_set_feasible(const Announcement& extra, TimePs now) const {
  std::vector<std::pair<TimePs, std::uint64_t>> due;  // (timestamp, bytes)
  for (const SemanticFlow& f : flows_) {
    if (f.urgent() && f.no_bubble_ps != kTimeNever)
      due.emplace_back(f.no_bubble_ps, f.remaining_bytes);
  }
  for (const Announcement& a : announced_) {
    if (a.no_bubble_ps != kTimeNever) due.emplace_back(a.no_bubble_ps, a.size_bytes);
  }
  if (extra.no_bubble_ps != kTimeNever) due.emplace_back(extra.no_bubble_ps, extra.size_bytes);
  const double budget_bps = config_.allocator.link_bps * config_.allocator.overload_usable_fraction;
  // The transfer alone, at the whole budget from its projected start (not
  // before its producer ends), must finish by its timestamp; the prefix
  // test below lets every flow start now.
  if (extra.no_bubble_ps != kTimeNever &&
      transfer_ps(static_cast<double>(extra.size_bytes), budget_bps) >
          extra.no_bubble_ps - std::max(now, extra.start_ps)) {
    return false;
  }
  std::sort(due.begin(), due.end());
  double bytes = 0;
  for (const auto& [deadline_ps, size_bytes] : due) {
    bytes += static_cast<double>(size_bytes);
    if (deadline_ps <= now || transfer_ps(bytes, budget_bps) > deadline_ps - now) return false;
  }
  return true;
}

bool ReceiverScheduler::update_no_bubble(FlowId id, TimePs no_bubble_ps) {
  SemanticFlow* f = find(id);
  if (f == nullptr) return false;
  if (f->no_bubble_ps != no_bubble_ps) {
    f->no_bubble_ps = no_bubble_ps;
    dirty_ = true;
  }
  return true;
}

void ReceiverScheduler::update_remaining(FlowId id, std::uint64_t remaining_bytes) {
  if (SemanticFlow* f = find(id)) f->remaining_bytes = remaining_bytes;
  // A flow whose lease lapsed unused is back: grant it as soon as possible.
  if (issuer_.note_data(id)) dirty_ = true;
}

void ReceiverScheduler::set_sender_cap(FlowId id, double cap_bps) {
  if (SemanticFlow* f = find(id); f != nullptr && f->sender_cap_bps != cap_bps) {
    f->sender_cap_bps = cap_bps;
    dirty_ = true;
  }
}

void ReceiverScheduler::remove_flow(FlowId id) {
  std::erase_if(announced_flows_, [id](const AnnouncedFlow& a) { return a.id == id; });
  set_aside_flow(id);
}

void ReceiverScheduler::set_aside_flow(FlowId id) {
  const auto it = std::find_if(flows_.begin(), flows_.end(),
                               [id](const SemanticFlow& f) { return f.id == id; });
  if (it == flows_.end()) return;
  flows_.erase(it);
  dirty_ = true;
}

void ReceiverScheduler::complete_flow(FlowId id, TimePs now) {
  const SemanticFlow* f = find(id);
  if (f == nullptr) return;
  if (f->stream != 0) issuer_.retire(id, f->stream, now);
  const auto announced = std::find_if(announced_flows_.begin(), announced_flows_.end(),
                                      [id](const AnnouncedFlow& a) { return a.id == id; });
  if (announced != announced_flows_.end()) {
    const bool late = now > announced->announced_no_bubble_ps;
    AnnouncedOutcomes& o = announced_outcomes_;
    ++(announced->warned ? (late ? o.warned_late : o.warned_on_time)
                         : (late ? o.unwarned_late : o.unwarned_on_time));
  }
  remove_flow(id);
}

// An exponentially decaying count: each byte adds 8 / tau bits per second,
// and the sum decays with time constant tau.
double ReceiverScheduler::DecayingRate::at(TimePs now, TimePs tau_ps) const {
  const double tau = static_cast<double>(tau_ps);
  const double age = static_cast<double>(now - updated_ps);
  return bps * std::exp(-age / tau);
}

void ReceiverScheduler::DecayingRate::add(std::uint64_t bytes, TimePs now, TimePs tau_ps) {
  bps = at(now, tau_ps) + static_cast<double>(bytes) * 8.0 /
                              (static_cast<double>(tau_ps) / static_cast<double>(kPsPerSec));
  updated_ps = now;
}

double ReceiverScheduler::unscheduled_bps(TimePs now) const {
  return unscheduled_.at(now, config_.unscheduled_window_ps);
}

double ReceiverScheduler::unscheduled_background_bps(TimePs now) const {
  return unscheduled_background_.at(now, config_.unscheduled_window_ps);
}

void ReceiverScheduler::set_link_bps(double link_bps) {
  if (link_bps == config_.allocator.link_bps) return;
  config_.allocator.link_bps = link_bps;
  dirty_ = true;
}

void ReceiverScheduler::set_urgent_first(bool urgent_first) {
  if (urgent_first == config_.allocator.urgent_first) return;
  config_.allocator.urgent_first = urgent_first;
  dirty_ = true;
}

void ReceiverScheduler::note_unscheduled(std::uint64_t bytes, TimePs now, bool background) {
  unscheduled_.add(bytes, now, config_.unscheduled_window_ps);
  if (background && config_.urgent_over_blind_background) {
    unscheduled_background_.add(bytes, now, config_.unscheduled_window_ps);
  }
}

void ReceiverScheduler::note_ungranted_background(TimePs now) {
  // Its arrival or its end changes the allocation, so the first packet after
  // a quiet spell re-plans at once (the periodic reallocation notices the end).
  if (now >= ungranted_background_until_ps_) dirty_ = true;
  ungranted_background_until_ps_ = now + config_.unscheduled_window_ps;
}

std::vector<Grant> ReceiverScheduler::poll(TimePs now) {
  const bool stale =
      reallocates_periodically() && now >= last_allocation_ps_ + config_.reallocate_every_ps;
  if (issuer_.expire_streams(now)) dirty_ = true;  // a stream's reserved rate is free again
  if (!announced_.empty() || !planned_.empty()) plan_announcements(now);
  if (!dirty_ && !stale) return issuer_.due(now);

  // Fold the allocation that was in force since the last one into background's
  // long-run share (only while background flows exist).
  const bool has_background = std::any_of(flows_.begin(), flows_.end(), [](const SemanticFlow& f) {
    return !f.urgent() && f.remaining_bytes > 0;
  });
  if (has_background && allocation_.budget_bps > 0) {
    const double weight = std::exp(-static_cast<double>(now - share_updated_ps_) /
                                   static_cast<double>(config_.starvation_window_ps));
    const double share = background_rate_bps_ / allocation_.budget_bps;
    background_share_ = weight * background_share_ + (1 - weight) * share;
  }
  share_updated_ps_ = now;
  const bool protect = background_share_ < 0.5 * config_.allocator.background_floor_fraction;

  dirty_ = false;
  last_allocation_ps_ = now;
  ++reallocations_;
  // Stream leases hold their rate for transfers not started yet, as blind
  // arrivals do: both are capacity the allocation must leave free.
  const ReceiverConditions conditions{
      .unscheduled_bps = unscheduled_bps(now) + issuer_.reserved_bps(),
      // While background is short of its floor, its floor must be real: the
      // room for blind background (priority 2, above granted background)
      // comes out of the whole budget again.
      .unscheduled_background_bps = protect ? 0.0 : unscheduled_background_bps(now),
      .protect_background = protect,
      .ungranted_background = now < ungranted_background_until_ps_};
  allocate_into(flows_, now, conditions, config_.allocator, allocation_, allocation_scratch_);
  background_rate_bps_ = 0;
  for (const FlowAllocation& a : allocation_.flows) {
    if (!a.urgent) background_rate_bps_ += a.rate_bps;
  }
  targets_.clear();
  for (const FlowAllocation& a : allocation_.flows) {
    targets_.push_back({a.id, a.rate_bps, config_.priorities.priority(a), a.urgent});
  }
  return issuer_.update(targets_, now, allocation_.budget_bps);
}

TimePs ReceiverScheduler::next_poll_ps() const {
  TimePs next = issuer_.next_due_ps();
  if (dirty_) return 0;
  if (reallocates_periodically()) {
    next = std::min(next, last_allocation_ps_ + config_.reallocate_every_ps);
  }
  for (const Announcement& a : announced_)
    next = std::min(next, a.start_ps - config_.announce_lead_ps);
  for (const Announcement& a : planned_)
    next = std::min(next, a.start_ps + config_.grants.validity_ps);
  return next;
}

}  // namespace safs::core
