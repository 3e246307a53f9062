// Safe allocation of a receiver's downlink across the flows that converge on
// it. "Safe": the total never exceeds the usable capacity, so the receiver's
// own port does not queue; the fabric's congestion is left to the congestion
// control underneath.
//
// Order of service (docs/safs.md has the reasoning):
//  1. Urgent flows in (criticality desc, no-bubble time asc) order get their
//     no-bubble demand as a floor, while the budget lasts. An urgent set that
//     EDF could finish on time at the budget rate finishes on time this way,
//     and under overload the order is EDF's, which minimises the largest
//     lateness (Jackson's rule).
//  2. Background flows get a small reserved floor so that no stream of urgent
//     work starves them forever. Under overload (the urgent set cannot all be
//     on time) the floor and the safety headroom are given up, since every
//     bit of urgent lateness is GPU idle time; the caller keeps the floor on
//     anyway when background has been starved for too long (ReceiverScheduler
//     does this with a long-run average).
//  3. The leftover goes first to urgent flows whose slack is low, then to
//     urgent flows without a timestamp, then to background flows (max-min
//     fair or SRPT), then to any urgent flow: work-conserving, but urgent
//     flows with slack leave room for others.
#pragma once

#include <cstdint>
#include <vector>

#include "core/demand.h"
#include "core/semantic_flow.h"

namespace safs::core {

enum class BackgroundPolicy : std::uint8_t { kMaxMinFair, kShortestRemainingFirst };

struct AllocatorConfig {
  double link_bps = 100e9;        // receiver downlink
  double usable_fraction = 0.97;  // 1 - u: headroom for unscheduled bytes and estimation error
  double overload_usable_fraction = 1.0;    // the same when the urgent set is infeasible
  double background_floor_fraction = 0.01;  // reserved for background flows when any exist
  TimePs rtt_ps = 10 * kPsPerUs;            // for the low-slack threshold
  DemandConfig demand;
  BackgroundPolicy background = BackgroundPolicy::kMaxMinFair;
  // false: urgent flows take their no-bubble rate as a floor and background
  // the rest ("just in time": the most background throughput, every deadline
  // met when feasible). true: urgent flows take all they can in service order
  // (EDF at line rate: they finish as early as possible, with the most margin,
  // and background gets only its floor meanwhile).
  bool urgent_first = false;
  // Between the two, per flow ("slack-adaptive service"): an urgent flow
  // that cannot afford to be paced, because its slack is under
  // line_rate_slack_rtts RTTs or its remaining bytes fit in one
  // bandwidth-delay product (a grant turnaround is then most of its
  // transfer), takes all it can in service order as under urgent_first;
  // one with ample slack gets its no-bubble rate and leaves the rest to
  // others. An urgent flow without a timestamp keeps its own place (after
  // the floors, before background). urgent_first, when set, applies to
  // every flow.
  bool slack_adaptive = false;
  double line_rate_slack_rtts = 4;  // "a few RTTs"; ours
  // true: urgent flows without a no-bubble timestamp (the runtime lost or
  // never had it) take the leftover before background, as a static priority
  // class would serve them; false: after background, with the urgent flows
  // that have slack (a caller that wants them treated as background, as the
  // simulated SAFS transport does with this off, marks them so).
  bool untimed_urgent_before_background = true;
};

struct FlowAllocation {
  FlowId id = 0;
  double rate_bps = 0;
  Demand demand;
  std::uint32_t urgent_rank = 0;  // position in the urgent service order (urgent only)
  bool urgent = false;
};

struct Allocation {
  std::vector<FlowAllocation> flows;  // in the order of the input
  double budget_bps = 0;              // usable capacity after the unscheduled reserve (urgent's)
  bool urgent_feasible = true;        // EDF prefix test at the normal urgent budget
  double background_floor_bps = 0;    // reserved for background in this allocation
  std::uint32_t overdue = 0;          // urgent flows already past their timestamp
  double total_bps() const;
};

// What a receiver sees beside the flows it allocates, at one allocation.
struct ReceiverConditions {
  // The rate of blind (not yet granted) arrivals, and of leases held for
  // streams' next transfers: capacity to leave free.
  double unscheduled_bps = 0;
  // The part of unscheduled_bps that is background and that the urgent
  // flows' budget need not hold out: senders send blind background below
  // every granted urgent priority (docs/safs.md, "Priorities"), so the
  // switches serve urgent data ahead of it. It is held out of background's
  // share instead (ReceiverConfig::urgent_over_blind_background; 0: none).
  double unscheduled_background_bps = 0;
  // Keep the background floor even under overload.
  bool protect_background = true;
  // Background this receiver does not grant (sent under its window alone)
  // is arriving. What the flows here leave of the budget then stays free for
  // it, instead of topping up urgent flows past their no-bubble rates (step
  // 3c), as a granted background would take it. Under overload too: urgent
  // flows still get their no-bubble rates first, and low-slack ones are
  // still topped up (step 3a).
  bool ungranted_background = false;
};

// `unscheduled_bps` and `protect_background` as in ReceiverConditions.
Allocation allocate(const std::vector<SemanticFlow>& flows, TimePs now, double unscheduled_bps,
                    const AllocatorConfig& config, bool protect_background = true);

// Working memory of allocate_into: a receiver that reallocates on every
// change keeps one, so that its allocations reuse these buffers instead of
// allocating a dozen vectors per call (the simulator reallocates hundreds of
// thousands of times per run).
struct AllocationScratch {
  std::vector<double> rate, cap, room;
  std::vector<std::size_t> urgent, background, low, single, open, still_open;
  std::vector<std::vector<std::size_t>> runs;  // the first `run_count` are in use
  std::size_t run_count = 0;
  std::vector<const SemanticFlow*> by_deadline;
};

// allocate(), into `result` (overwritten whole), with `scratch`'s buffers.
void allocate_into(const std::vector<SemanticFlow>& flows, TimePs now,
                   const ReceiverConditions& conditions, const AllocatorConfig& config,
                   Allocation& result, AllocationScratch& scratch);

// The EDF prefix test on one link: sorted by deadline, every prefix's bytes
// fit in the capacity up to its deadline (less headroom). Exposed for tests
// and tools.
bool edf_feasible(const std::vector<SemanticFlow>& flows, TimePs now, double capacity_bps,
                  TimePs headroom_ps);

}  // namespace safs::core
