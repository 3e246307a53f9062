// Everything a receiver does for SAFS, in one object both faces drive: keep
// the semantic flows converging on this receiver, reallocate its downlink when
// something changes (or demands drift), and turn allocations into grants.
// Time is passed in; the caller sends the grants it returns and calls poll()
// again at next_poll_ps().
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "core/allocator.h"
#include "core/grant_issuer.h"
#include "core/semantic_flow.h"

namespace safs::core {

// Network priorities for scheduled data (background.md §5.5): urgent flows by
// their rank in the service order, then background.
struct PriorityMap {
  std::array<std::uint8_t, 3> urgent_by_rank = {5, 4, 3};  // rank 0, 1, 2 and later
  std::uint8_t background = 1;
  std::uint8_t priority(const FlowAllocation& a) const {
    if (!a.urgent) return background;
    return urgent_by_rank[a.urgent_rank < 2 ? a.urgent_rank : 2];
  }
};

struct ReceiverConfig {
  AllocatorConfig allocator;
  GrantConfig grants;
  PriorityMap priorities;
  // Reallocate at least this often while flows are active: demands drift as
  // time passes and bytes arrive.
  TimePs reallocate_every_ps = 20 * kPsPerUs;
  // Time constant of the estimate of blind (unscheduled) arrivals.
  TimePs unscheduled_window_ps = 100 * kPsPerUs;
  // Under overload the background floor is given up, but only while
  // background's long-run share (averaged over this window) stays above half
  // the floor: no flow is starved forever.
  TimePs starvation_window_ps = 10'000 * kPsPerUs;
};

class ReceiverScheduler {
 public:
  explicit ReceiverScheduler(const ReceiverConfig& config)
      : config_(config), issuer_(config.grants) {}

  // A flow announced itself (its first packet or an announce message).
  // Adding a known flow updates it instead.
  void add_flow(const SemanticFlow& flow);
  // The producer moved the flow's no-bubble timestamp. False if unknown.
  bool update_no_bubble(FlowId id, TimePs no_bubble_ps);
  // Data arrived: bytes still to arrive, as the receiver sees them (cheap; a
  // reallocation only if the flow's lease had lapsed unused).
  void update_remaining(FlowId id, std::uint64_t remaining_bytes);
  // The sender reported what it can achieve for this flow.
  void set_sender_cap(FlowId id, double cap_bps);
  void remove_flow(FlowId id);
  // The flow's last byte arrived: remove it. On a stream, its lease stays
  // reserved for the stream's next transfer (GrantIssuer::retire).
  void complete_flow(FlowId id, TimePs now);
  // Bytes that arrived without a grant (they use capacity the grants do not).
  void note_unscheduled(std::uint64_t bytes, TimePs now);
  // A packet of background this receiver does not grant (its sender sends it
  // under its window alone) arrived. For unscheduled_window_ps after it, what
  // the granted flows leave stays free for such background.
  void note_ungranted_background(TimePs now);
  // The capacity allocated from changed (unmanaged traffic took part of the
  // link, or left): the next poll re-plans with it.
  void set_link_bps(double link_bps);
  double link_bps() const { return config_.allocator.link_bps; }
  // Urgent service switched between just in time and EDF at line rate
  // (AllocatorConfig::urgent_first); the next poll re-plans with it.
  void set_urgent_first(bool urgent_first);
  bool urgent_first() const { return config_.allocator.urgent_first; }

  // Reallocates if anything changed or the last allocation is stale, and
  // returns the grants to send now.
  std::vector<Grant> poll(TimePs now);
  // When poll() should run next (kTimeNever: nothing to do until a change;
  // 0 while a change waits).
  TimePs next_poll_ps() const;
  // A flow was added, moved or removed since the last poll(): the caller
  // should poll (or schedule a poll) now.
  bool has_changes() const { return dirty_; }

  bool knows(FlowId id) const { return find(id) != nullptr; }
  const std::vector<SemanticFlow>& flows() const { return flows_; }
  const Allocation& allocation() const { return allocation_; }
  double unscheduled_bps(TimePs now) const;
  std::uint64_t reallocations() const { return reallocations_; }
  std::uint64_t grants_issued() const { return issuer_.grants_issued(); }

 private:
  SemanticFlow* find(FlowId id);
  // Demands drift only while some flow is served: not when every lease lapsed
  // (all senders stalled), so a receiver of stalled flows is quiet until data.
  bool reallocates_periodically() const { return !flows_.empty() && !issuer_.all_lapsed(); }
  const SemanticFlow* find(FlowId id) const;

  ReceiverConfig config_;
  GrantIssuer issuer_;
  std::vector<SemanticFlow> flows_;  // arrival order: deterministic
  Allocation allocation_;
  AllocationScratch allocation_scratch_;  // reused by every reallocation
  std::vector<GrantTarget> targets_;      // likewise
  bool dirty_ = false;
  TimePs last_allocation_ps_ = 0;
  double unscheduled_estimate_bps_ = 0;
  TimePs unscheduled_updated_ps_ = 0;
  // Ungranted background counts as arriving until then: its last packet plus
  // unscheduled_window_ps (0: none seen).
  TimePs ungranted_background_until_ps_ = 0;
  std::uint64_t reallocations_ = 0;
  double background_share_ = 1.0;   // long-run share of the budget background got
  double background_rate_bps_ = 0;  // background's total in the allocation in force
  TimePs share_updated_ps_ = 0;
};

}  // namespace safs::core
