#include "core/grant_issuer.h"

#include <algorithm>
#include <cmath>

namespace safs::core {

const char* grant_reason_name(GrantReason reason) {
  static constexpr std::array<const char*, kGrantReasons> kNames = {
      "first", "increase", "decrease", "priority", "resume", "refresh"};
  return kNames[static_cast<std::size_t>(reason)];
}

namespace {

// GrantReason's order of precedence.
GrantReason reason_of(double sent_rate_bps, std::uint8_t sent_priority, bool lapsed_before,
                      const GrantTarget& target) {
  if (sent_rate_bps < 0) return lapsed_before ? GrantReason::kResume : GrantReason::kFirst;
  if (sent_rate_bps == 0 && target.rate_bps > 0) return GrantReason::kResume;
  if (sent_priority != target.priority) return GrantReason::kPriority;
  if (target.rate_bps > sent_rate_bps) return GrantReason::kIncrease;
  if (target.rate_bps < sent_rate_bps) return GrantReason::kDecrease;
  return GrantReason::kRefresh;
}

}  // namespace

Grant GrantIssuer::issue(FlowState& state, const GrantTarget& target, TimePs now) {
  auto& counts = state.urgent ? grant_counts_.urgent : grant_counts_.background;
  ++counts[static_cast<std::size_t>(
      reason_of(state.sent_rate_bps, state.sent_priority, state.lapsed_before, target))];
  state.lapsed_before = false;
  state.sent_rate_bps = target.rate_bps;
  state.sent_priority = target.priority;
  state.lease_end_ps = now + config_.validity_ps;
  state.pending = false;
  state.heard = false;
  state.lapsed = false;
  ++grants_issued_;
  Grant g;
  g.flow = target.flow;
  g.rate_bps = target.rate_bps;
  g.priority = target.priority;
  g.epoch = ++last_epoch_;  // receiver-wide: a re-added flow's grants are still newer
  g.valid_for_ps = config_.validity_ps;
  const double lease_bytes = target.rate_bps / 8.0 * static_cast<double>(config_.validity_ps) /
                             static_cast<double>(kPsPerSec);
  g.byte_cap = static_cast<std::uint64_t>(lease_bytes) + config_.cap_slack_bytes;
  return g;
}

bool GrantIssuer::differs(const FlowState& state, const GrantTarget& target) const {
  if (state.sent_rate_bps < 0) return true;
  if (state.sent_priority != target.priority) return true;
  const double delta = std::abs(target.rate_bps - state.sent_rate_bps);
  return state.sent_rate_bps == 0 ? target.rate_bps > 0
                                  : delta > config_.change_threshold * state.sent_rate_bps;
}

std::vector<Grant> GrantIssuer::update(const std::vector<GrantTarget>& targets, TimePs now,
                                       double capacity_bps) {
  // Keep the state of listed flows (allocating only for new ones), forget
  // the others.
  for (auto& [id, state] : flows_) state.listed = false;
  for (const GrantTarget& target : targets) flows_[target.flow].listed = true;
  std::erase_if(flows_, [](const auto& entry) { return !entry.second.listed; });

  // A decrease below the re-send threshold leaves its sender at the old rate.
  // If increases land meanwhile, the rates in effect can exceed the capacity.
  // A background flow's increase then takes only what is free (the rest comes
  // when the others' changes pass theta); what urgent increases and first
  // grants still lack comes from small decreases, only as many as needed, the
  // largest first. Sending every small decrease on every increase, as this
  // once did, cost a grant per flow at the receiver each time one flow's fair
  // share moved: most of SAFS's control traffic under a web-search background.
  adjusted_.assign(targets.begin(), targets.end());
  bool any_increase = false;
  double eventual_bps = 0;  // in effect once this update's grants have all landed
  for (const GrantTarget& t : adjusted_) {
    FlowState& state = flows_[t.flow];
    state.forced_decrease = false;
    state.urgent = t.urgent;
    if (state.lapsed) continue;  // its sender is on its window, not on a rate
    any_increase = any_increase || is_increase(state, t);
    eventual_bps += differs(state, t) ? t.rate_bps : std::max(0.0, state.sent_rate_bps);
  }
  if (any_increase) {
    // With no capacity given, every small decrease goes whenever an increase does.
    double excess_bps = capacity_bps == std::numeric_limits<double>::infinity()
                            ? capacity_bps
                            : eventual_bps - capacity_bps;
    if (excess_bps > 0 && !config_.only_needed_decreases) {
      excess_bps = std::numeric_limits<double>::infinity();
    }
    if (excess_bps > 0 && std::isfinite(excess_bps)) {
      excess_bps -= defer_background_increases(excess_bps);
    }
    if (excess_bps > 0) force_small_decreases(excess_bps);
  }

  std::vector<Grant> out;
  std::vector<const GrantTarget*> increases;
  for (const GrantTarget& target : adjusted_) {
    FlowState& state = flows_[target.flow];
    if (state.lapsed) continue;  // granted again once it is heard from
    if (is_increase(state, target)) {
      increases.push_back(&target);
      continue;
    }
    state.pending = false;  // no longer an increase
    if (differs(state, target) || state.forced_decrease) {
      out.push_back(issue(state, target, now));  // decrease (or new priority): at once
      increases_allowed_ps_ = now + config_.control_delay_ps;
    }
  }
  // Each held-back increase keeps the release time it got when it was first
  // held, as long as it asks for no more: later decreases make room for later
  // increases, not for it, so they must not postpone it (else a stream of
  // arrivals could hold it back forever).
  for (const GrantTarget* target : increases) {
    FlowState& state = flows_[target->flow];
    const bool keeps_release = state.pending && target->rate_bps <= state.pending_target.rate_bps;
    if (!keeps_release) state.release_ps = increases_allowed_ps_;
    if (now >= state.release_ps) {
      out.push_back(issue(state, *target, now));
    } else {
      state.pending = true;
      state.pending_target = *target;
    }
  }
  std::vector<Grant> refreshes = due(now);
  out.insert(out.end(), refreshes.begin(), refreshes.end());
  return out;
}

bool GrantIssuer::is_increase(const FlowState& state, const GrantTarget& target) const {
  return differs(state, target) &&
         (state.sent_rate_bps < 0 || target.rate_bps > state.sent_rate_bps);
}

double GrantIssuer::defer_background_increases(double excess_bps) {
  double deferred_bps = 0;
  for (GrantTarget& t : adjusted_) {
    if (deferred_bps >= excess_bps) break;
    const FlowState& state = flows_[t.flow];
    if (t.urgent || state.lapsed || state.sent_rate_bps < 0 || !is_increase(state, t)) continue;
    const double cut_bps = std::min(t.rate_bps - state.sent_rate_bps, excess_bps - deferred_bps);
    t.rate_bps -= cut_bps;
    deferred_bps += cut_bps;
  }
  return deferred_bps;
}

void GrantIssuer::force_small_decreases(double excess_bps) {
  small_decreases_.clear();
  for (const GrantTarget& t : adjusted_) {
    const FlowState& state = flows_[t.flow];
    if (!state.lapsed && !differs(state, t) && t.rate_bps < state.sent_rate_bps) {
      small_decreases_.push_back({state.sent_rate_bps - t.rate_bps, t.flow});
    }
  }
  // Largest cut first, then by flow: the fewest grants, in a stable order.
  std::sort(small_decreases_.begin(), small_decreases_.end(), [](const auto& a, const auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  double covered_bps = 0;
  for (const auto& [cut_bps, flow] : small_decreases_) {
    if (covered_bps >= excess_bps) break;
    flows_[flow].forced_decrease = true;
    covered_bps += cut_bps;
  }
}

std::vector<Grant> GrantIssuer::due(TimePs now) {
  std::vector<Grant> out;
  for (auto& [id, state] : flows_) {
    if (state.pending && now >= state.release_ps) {
      out.push_back(issue(state, state.pending_target, now));
    } else if (!state.pending && state.sent_rate_bps >= 0 &&
               now >= state.lease_end_ps - config_.refresh_margin_ps) {
      if (refreshes(state)) {
        out.push_back(issue(state, {id, state.sent_rate_bps, state.sent_priority}, now));
      } else if (now >= state.lease_end_ps) {  // unused and over: its rate is no longer in effect
        state.lapsed = true;
        state.lapsed_before = true;
        state.sent_rate_bps = -1;
      }
    }
  }
  return out;
}

bool GrantIssuer::note_data(FlowId flow) {
  const auto it = flows_.find(flow);
  if (it == flows_.end()) return false;
  FlowState& state = it->second;
  state.heard = true;
  const bool resumed = state.lapsed;
  state.lapsed = false;
  return resumed;
}

bool GrantIssuer::all_lapsed() const {
  return !flows_.empty() && std::all_of(flows_.begin(), flows_.end(),
                                        [](const auto& entry) { return entry.second.lapsed; });
}

void GrantIssuer::retire(FlowId flow, StreamId stream, TimePs now) {
  const auto it = flows_.find(flow);
  if (it == flows_.end()) return;
  const FlowState& state = it->second;
  if (!state.lapsed && state.sent_rate_bps > 0 && state.lease_end_ps > now) {
    streams_[stream] = {state.sent_rate_bps, state.sent_priority, state.lease_end_ps};
  }
  flows_.erase(it);
}

bool GrantIssuer::adopt(FlowId flow, StreamId stream) {
  const auto it = streams_.find(stream);
  if (it == streams_.end()) return false;
  FlowState& state = flows_[flow];
  state.sent_rate_bps = it->second.rate_bps;
  state.sent_priority = it->second.priority;
  state.lease_end_ps = it->second.lease_end_ps;
  state.listed = true;
  state.heard = true;  // it is sending under the lease
  streams_.erase(it);
  return true;
}

bool GrantIssuer::hand_over(FlowId planned, FlowId flow) {
  const auto it = flows_.find(planned);
  if (it == flows_.end()) return false;
  FlowState state = it->second;
  flows_.erase(it);
  state.pending_target.flow = flow;
  state.heard = true;  // it is sending under the lease
  state.lapsed = false;
  flows_[flow] = state;
  return true;
}

// The sender's lease starts when the grant reaches it, up to one control delay
// after the receiver sent it: the reservation lasts that much longer.
bool GrantIssuer::expire_streams(TimePs now) {
  return std::erase_if(streams_, [&](const auto& entry) {
           return now >= entry.second.lease_end_ps + config_.control_delay_ps;
         }) > 0;
}

double GrantIssuer::reserved_bps() const {
  double sum = 0;
  for (const auto& [stream, lease] : streams_) sum += lease.rate_bps;
  return sum;
}

TimePs GrantIssuer::next_due_ps() const {
  TimePs next = kTimeNever;
  for (const auto& [stream, lease] : streams_) {
    next = std::min(next, lease.lease_end_ps + config_.control_delay_ps);
  }
  for (const auto& [id, state] : flows_) {
    if (state.pending) {
      next = std::min(next, state.release_ps);
    } else if (state.sent_rate_bps >= 0) {
      next = std::min(next, refreshes(state) ? state.lease_end_ps - config_.refresh_margin_ps
                                             : state.lease_end_ps);
    }
  }
  return next;
}

}  // namespace safs::core
