#include "core/allocator.h"

#include <algorithm>
#include <numeric>
#include <span>

namespace safs::core {

namespace {

double cap_of(const SemanticFlow& f, const AllocatorConfig& c) {
  return std::min(c.link_bps, f.sender_cap_bps);
}

// Urgent service order: criticality first, then earliest timestamp, then the
// consumer the flow feeds (so a group stays together), then id (a total
// order, so allocation is deterministic).
bool serves_before(const SemanticFlow& a, const SemanticFlow& b) {
  if (a.criticality != b.criticality) return a.criticality > b.criticality;
  if (a.no_bubble_ps != b.no_bubble_ps) return a.no_bubble_ps < b.no_bubble_ps;
  if (a.dependency != b.dependency) return a.dependency < b.dependency;
  return a.id < b.id;
}

// Whether an urgent flow takes all it can in service order rather than its
// no-bubble rate (AllocatorConfig::urgent_first and slack_adaptive).
bool goes_at_line_rate(const SemanticFlow& f, const Demand& demand, const AllocatorConfig& c) {
  if (c.urgent_first) return true;
  if (!c.slack_adaptive) return false;
  // A flow without a timestamp has its own place in the order (step 3a').
  if (f.no_bubble_ps == kTimeNever) return false;
  const double bdp_bytes = c.link_bps / 8.0 * static_cast<double>(c.rtt_ps) / kPsPerSec;
  return static_cast<double>(f.remaining_bytes) <= bdp_bytes ||
         static_cast<double>(demand.slack_ps) <
             c.line_rate_slack_rtts * static_cast<double>(c.rtt_ps);
}

// Max-min fair water-filling of `budget` over `members`, each capped.
void water_fill(std::vector<std::size_t>& members, const std::vector<double>& cap,
                std::vector<double>& rate, double& budget) {
  std::sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
    const double ha = cap[a] - rate[a], hb = cap[b] - rate[b];
    return ha < hb || (ha == hb && a < b);
  });
  std::size_t left = members.size();
  for (const std::size_t i : members) {
    const double share = budget / static_cast<double>(left--);
    const double give = std::min(share, cap[i] - rate[i]);
    if (give > 0) {
      rate[i] += give;
      budget -= give;
    }
  }
}

// Flows feeding the same consumer op with the same timestamp form a group
// whose last arrival binds: serving them one after another finishes the group
// no sooner than sharing, but costs a grant turnaround at every hand-over.
bool same_group(const SemanticFlow& a, const SemanticFlow& b) {
  return a.dependency != 0 && a.dependency == b.dependency && a.no_bubble_ps == b.no_bubble_ps &&
         a.criticality == b.criticality;
}

// Gives `budget` to `members` in proportion to their remaining bytes (so a
// group finishes together), each at most `room[i]` more; what a capped member
// cannot take goes to the others. `room` is scratch: members' entries are
// used up.
void share_by_remaining(const std::vector<std::size_t>& members,
                        const std::vector<SemanticFlow>& flows, std::vector<double>& room,
                        std::vector<double>& rate, double& budget, AllocationScratch& scratch) {
  if (members.size() == 1) {  // the common case: no group
    const std::size_t i = members[0];
    const double give = std::max(0.0, std::min(room[i], budget));
    rate[i] += give;
    budget -= give;
    return;
  }
  std::vector<std::size_t>& open = scratch.open;
  open.assign(members.begin(), members.end());
  while (!open.empty() && budget > 1e-6) {
    double bytes = 0;
    for (const std::size_t i : open) bytes += static_cast<double>(flows[i].remaining_bytes);
    const double round = budget;
    std::vector<std::size_t>& still_open = scratch.still_open;
    still_open.clear();
    for (const std::size_t i : open) {
      const double share = round * static_cast<double>(flows[i].remaining_bytes) / bytes;
      const double give = std::min(share, room[i]);
      rate[i] += give;
      room[i] -= give;
      budget -= give;
      if (room[i] > 1e-6) still_open.push_back(i);
    }
    if (still_open.size() == open.size()) break;  // nobody capped: the budget is spent
    open.swap(still_open);
  }
  budget = std::max(0.0, budget);
}

}  // namespace

double Allocation::total_bps() const {
  double total = 0;
  for (const FlowAllocation& f : flows) total += f.rate_bps;
  return total;
}

namespace {

bool edf_feasible(const std::vector<SemanticFlow>& flows, TimePs now, double capacity_bps,
                  TimePs headroom_ps, std::vector<const SemanticFlow*>& urgent) {
  urgent.clear();
  for (const SemanticFlow& f : flows) {
    if (f.urgent() && f.remaining_bytes > 0) urgent.push_back(&f);
  }
  // Pure EDF (criticality is a service preference, not part of feasibility).
  std::sort(urgent.begin(), urgent.end(), [](const SemanticFlow* a, const SemanticFlow* b) {
    return a->no_bubble_ps < b->no_bubble_ps ||
           (a->no_bubble_ps == b->no_bubble_ps && a->id < b->id);
  });
  double bytes = 0;
  for (const SemanticFlow* f : urgent) {
    bytes += static_cast<double>(f->remaining_bytes);
    const TimePs window = f->no_bubble_ps - now - headroom_ps;
    if (window <= 0 || transfer_ps(bytes, capacity_bps) > window) return false;
  }
  return true;
}

}  // namespace

bool edf_feasible(const std::vector<SemanticFlow>& flows, TimePs now, double capacity_bps,
                  TimePs headroom_ps) {
  std::vector<const SemanticFlow*> scratch;
  return edf_feasible(flows, now, capacity_bps, headroom_ps, scratch);
}

Allocation allocate(const std::vector<SemanticFlow>& flows, TimePs now, double unscheduled_bps,
                    const AllocatorConfig& config, bool protect_background) {
  Allocation result;
  AllocationScratch scratch;
  allocate_into(flows, now,
                {.unscheduled_bps = unscheduled_bps, .protect_background = protect_background},
                config, result, scratch);
  return result;
}

void allocate_into(const std::vector<SemanticFlow>& flows, TimePs now,
                   const ReceiverConditions& conditions, const AllocatorConfig& config,
                   Allocation& result, AllocationScratch& scratch) {
  // What the urgent flows' budget holds out: every blind arrival, or only
  // the urgent ones (ReceiverConfig::urgent_over_blind_background; the two
  // estimates decay apart, so the difference is clamped).
  const double unscheduled_bps =
      conditions.unscheduled_background_bps > 0
          ? std::max(0.0, conditions.unscheduled_bps - conditions.unscheduled_background_bps)
          : conditions.unscheduled_bps;
  const std::size_t n = flows.size();
  result.flows.assign(n, FlowAllocation{});
  result.budget_bps = std::max(0.0, config.usable_fraction * config.link_bps - unscheduled_bps);
  result.urgent_feasible = true;
  result.background_floor_bps = 0;
  result.overdue = 0;

  std::vector<double>& rate = scratch.rate;
  std::vector<double>& cap = scratch.cap;
  rate.assign(n, 0.0);
  cap.assign(n, 0.0);
  std::vector<std::size_t>& urgent = scratch.urgent;
  std::vector<std::size_t>& background = scratch.background;
  urgent.clear();
  background.clear();
  for (std::size_t i = 0; i < n; ++i) {
    const SemanticFlow& f = flows[i];
    cap[i] = f.remaining_bytes > 0 ? cap_of(f, config) : 0.0;
    FlowAllocation& out = result.flows[i];
    out.id = f.id;
    out.urgent = f.urgent();
    out.demand = no_bubble_demand(f, now, cap[i], config.demand);
    if (f.remaining_bytes == 0) continue;
    (f.urgent() ? urgent : background).push_back(i);
  }
  std::sort(urgent.begin(), urgent.end(),
            [&](std::size_t a, std::size_t b) { return serves_before(flows[a], flows[b]); });

  double background_floor =
      background.empty() ? 0.0 : config.background_floor_fraction * result.budget_bps;
  result.urgent_feasible = edf_feasible(flows, now, result.budget_bps - background_floor,
                                        config.demand.headroom_ps, scratch.by_deadline);
  if (!result.urgent_feasible) {
    // Overload: lateness is bubbles, so urgent work gets the whole link.
    result.budget_bps =
        std::max(0.0, config.overload_usable_fraction * config.link_bps - unscheduled_bps);
    background_floor = conditions.protect_background && !background.empty()
                           ? config.background_floor_fraction * result.budget_bps
                           : 0.0;
  }
  result.background_floor_bps = background_floor;
  double urgent_budget = result.budget_bps - background_floor;

  // Urgent flows in service order, a group (same consumer and timestamp) at
  // a time: members are served together, in proportion to their bytes.
  std::vector<std::vector<std::size_t>>& all_runs = scratch.runs;
  std::size_t& run_count = scratch.run_count;
  run_count = 0;
  for (std::size_t r = 0; r < urgent.size(); ++r) {
    const std::size_t i = urgent[r];
    result.flows[i].urgent_rank = static_cast<std::uint32_t>(r);
    if (result.flows[i].demand.overdue) ++result.overdue;
    if (run_count == 0 || !same_group(flows[all_runs[run_count - 1].front()], flows[i])) {
      if (all_runs.size() == run_count) all_runs.emplace_back();
      all_runs[run_count++].clear();
    }
    all_runs[run_count - 1].push_back(i);
  }
  const auto runs = std::span(all_runs.data(), run_count);

  // 1. Urgent floors. urgent_first: EDF at line rate (each takes all it can).
  std::vector<double>& room = scratch.room;
  room.assign(n, 0.0);
  for (const std::vector<std::size_t>& run : runs) {
    for (const std::size_t i : run) {
      const Demand& demand = result.flows[i].demand;
      room[i] =
          std::min(goes_at_line_rate(flows[i], demand, config) ? cap[i] : demand.rate_bps, cap[i]);
    }
    share_by_remaining(run, flows, room, rate, urgent_budget, scratch);
  }
  // What the floors left of the urgent budget; background's floor stays apart
  // until step 3b, so no urgent top-up can eat it.
  double spare = urgent_budget;
  auto top_up = [&](const std::vector<std::size_t>& members) {
    for (const std::size_t i : members) room[i] = std::max(0.0, cap[i] - rate[i]);
    share_by_remaining(members, flows, room, rate, spare, scratch);
  };

  // 3a. Low-slack urgent flows first: they have no time to wait for a later
  // reallocation. Low = within two RTTs plus a tenth of their own line-rate
  // transfer time (background.md §5.3, sigma_lo).
  for (const std::vector<std::size_t>& run : runs) {
    std::vector<std::size_t>& low = scratch.low;
    low.clear();
    for (const std::size_t i : run) {
      const double line_time =
          static_cast<double>(transfer_ps(static_cast<double>(flows[i].remaining_bytes), cap[i]));
      const double low_slack = 2.0 * static_cast<double>(config.rtt_ps) + 0.1 * line_time;
      if (static_cast<double>(result.flows[i].demand.slack_ps) < low_slack) low.push_back(i);
    }
    top_up(low);
  }
  // 3a'. Urgent flows without a timestamp: something waits on them, but the
  // receiver cannot tell when, so they take what they can ahead of
  // background (the static priority class an operator would give them)
  // rather than behind it. They sort last in service order.
  if (config.untimed_urgent_before_background) {
    for (const std::vector<std::size_t>& run : runs) {
      if (flows[run.front()].no_bubble_ps == kTimeNever) top_up(run);
    }
  }
  // 3b. Background flows share the rest, with their reserved floor, less
  // the blind background the urgent budget did not hold out (that room is
  // left to it, and not to the top-up of 3c either).
  spare += background_floor;
  if (conditions.unscheduled_background_bps > 0) {
    spare = std::max(0.0, spare - conditions.unscheduled_background_bps);
  }
  if (config.background == BackgroundPolicy::kMaxMinFair) {
    water_fill(background, cap, rate, spare);
  } else {
    std::sort(background.begin(), background.end(), [&](std::size_t a, std::size_t b) {
      return flows[a].remaining_bytes < flows[b].remaining_bytes ||
             (flows[a].remaining_bytes == flows[b].remaining_bytes && flows[a].id < flows[b].id);
    });
    for (const std::size_t i : background) {
      scratch.single.assign(1, i);
      top_up(scratch.single);
    }
  }

  // 3c. Whatever background could not use goes to urgent flows (work
  // conservation), unless background this receiver does not grant can use it.
  if (!conditions.ungranted_background) {
    for (const std::vector<std::size_t>& run : runs) top_up(run);
  }

  for (std::size_t i = 0; i < n; ++i) result.flows[i].rate_bps = rate[i];
}

}  // namespace safs::core
