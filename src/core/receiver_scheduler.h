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

// A transfer its sender announced before starting it: the compute schedule
// says which op will produce it, and when that op should end.
struct Announcement {
  FlowId planned_id = 0;  // planned_flow_id(sender, the sender's number for it)
  std::uint32_t sender = 0;
  std::uint64_t size_bytes = 0;  // in link terms, as SemanticFlow::size_bytes
  TimePs start_ps = 0;           // projected start (receiver clock)
  TimePs no_bubble_ps = kTimeNever;
  std::uint64_t dependency = 0;  // the consumer op: with the sender, what the real flow is known by
  std::uint32_t criticality = 0;
  // Set by announce(), not by callers: it was warned of (kInfeasible).
  bool warned = false;
};

// Announced transfers whose flow came and ended, by whether their
// announcement was warned of (AnnounceOutcome::kInfeasible) and whether their
// last byte arrived after the no-bubble timestamp they were announced with
// (the one the warning judged; a consumer that falls behind may move it
// later): how good the warning is.
struct AnnouncedOutcomes {
  std::uint64_t warned_late = 0;
  std::uint64_t warned_on_time = 0;
  std::uint64_t unwarned_late = 0;
  std::uint64_t unwarned_on_time = 0;
};

enum class AnnounceOutcome : std::uint8_t {
  kPlanned,     // it will be planned in
  kInfeasible,  // planned, but it or the urgent set it joins cannot all be on time
  kDropped,     // too many announcements pending: ignored
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
  // true: blind background arrivals are held out of background's share
  // only, not out of the urgent flows' budget
  // (ReceiverConditions::unscheduled_background_bps). false: every blind
  // arrival is held out of the whole budget. docs/safs.md, "Urgent over
  // blind background".
  bool urgent_over_blind_background = false;
  // Under overload the background floor is given up, but only while
  // background's long-run share (averaged over this window) stays above half
  // the floor: no flow is starved forever.
  TimePs starvation_window_ps = 10'000 * kPsPerUs;
  // An announced transfer enters the allocation, and is granted, this long
  // before its projected start: its grant must reach the sender first (one
  // control delay, 5 us) and the producer may end a little early. Ours.
  TimePs announce_lead_ps = 20 * kPsPerUs;
  // Announcements waiting to be planned, and planned ones not yet started,
  // at most (a bound against a sender that announces without end).
  std::size_t max_announcements = 256;
};

class ReceiverScheduler {
 public:
  explicit ReceiverScheduler(const ReceiverConfig& config)
      : config_(config), issuer_(config.grants) {}

  // A flow announced itself (its first packet or an announce message).
  // Adding a known flow updates it instead.
  void add_flow(const SemanticFlow& flow);
  // A transfer announced ahead. From announce_lead_ps before its projected
  // start it is planned like a flow of its own (planned_id): its rate is
  // reserved and granted, so its sender can start it under that grant (no
  // blind bytes, no round trip). Its real flow, matched by sender and
  // dependency when its first packet arrives, takes the plan's place (and
  // the lease, if it started under it). A plan whose flow has not come a
  // lease after its projected start is dropped. Warns (kInfeasible) when
  // the urgent flows known and announced cannot all meet their timestamps
  // even if every one could start now, or this one cannot meet its own at
  // the full budget from its projected start.
  AnnounceOutcome announce(const Announcement& announcement, TimePs now);
  // The announced transfer started as a flow this receiver does not
  // allocate (sent whole blind): its plan is dropped.
  void forget_announcement(std::uint32_t sender, std::uint64_t dependency);
  // The producer moved the flow's no-bubble timestamp. False if unknown.
  bool update_no_bubble(FlowId id, TimePs no_bubble_ps);
  // Data arrived: bytes still to arrive, as the receiver sees them (cheap; a
  // reallocation only if the flow's lease had lapsed unused).
  void update_remaining(FlowId id, std::uint64_t remaining_bytes);
  // The sender reported what it can achieve for this flow.
  void set_sender_cap(FlowId id, double cap_bps);
  // The flow is gone for good (also one set aside).
  void remove_flow(FlowId id);
  // The flow leaves the allocation for now (a ghost: it owes bytes and
  // sends none) but keeps what it is judged by at its last byte, its
  // announcement's warning and timestamp, should it come back (add_flow).
  void set_aside_flow(FlowId id);
  // The flow's last byte arrived: remove it. On a stream, its lease stays
  // reserved for the stream's next transfer (GrantIssuer::retire).
  void complete_flow(FlowId id, TimePs now);
  // Bytes that arrived without a grant (they use capacity the grants do not);
  // `background`: of a background flow (ReceiverConfig::
  // urgent_over_blind_background).
  void note_unscheduled(std::uint64_t bytes, TimePs now, bool background = false);
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
  // The part of it that is background (0 unless
  // ReceiverConfig::urgent_over_blind_background).
  double unscheduled_background_bps(TimePs now) const;
  std::uint64_t reallocations() const { return reallocations_; }
  std::uint64_t grants_issued() const { return issuer_.grants_issued(); }
  const GrantCounts& grant_counts() const { return issuer_.grant_counts(); }
  // Announcements: received; of those, warned of (kInfeasible); ignored
  // for the bound (kDropped); and given up because their flow never came
  // (planned or not).
  std::uint64_t announcements_received() const { return announcements_received_; }
  std::uint64_t announcements_infeasible() const { return announcements_infeasible_; }
  std::uint64_t announcements_dropped() const { return announcements_dropped_; }
  std::uint64_t announcements_given_up() const { return announcements_given_up_; }
  const AnnouncedOutcomes& announced_outcomes() const { return announced_outcomes_; }
  // Announcements not yet planned, and plans whose flow has not started.
  std::size_t announcements_pending() const { return announced_.size() + planned_.size(); }

 private:
  SemanticFlow* find(FlowId id);
  // Demands drift only while some flow is served: not when every lease lapsed
  // (all senders stalled), so a receiver of stalled flows is quiet until data.
  bool reallocates_periodically() const { return !flows_.empty() && !issuer_.all_lapsed(); }
  const SemanticFlow* find(FlowId id) const;
  // Plans the announcements due by now, and drops plans whose flow never came.
  void plan_announcements(TimePs now);
  // The real flow `flow` takes the place of its plan or announcement, if any.
  void replace_plan(const SemanticFlow& flow);
  // Drops the plan or announcement of (sender, dependency); a plan's lease
  // passes to `heir` unless it is kNoFlow.
  static constexpr FlowId kNoFlow = ~FlowId{0};
  void drop_plan(std::uint32_t sender, std::uint64_t dependency, FlowId heir);
  // Whether the urgent flows known and announced, with `extra`, could all
  // meet their timestamps at the budget if each could start now (EDF), and
  // `extra` its own from its projected start. Each is a necessary condition
  // for the set to be feasible at this budget with these starts, so a set
  // that fails either cannot all be on time unless the starts are wrong.
  bool urgent_set_feasible(const Announcement& extra, TimePs now) const;
  // The announcement or plan of (sender, dependency), or null.
  const Announcement* find_announcement(std::uint32_t sender, std::uint64_t dependency) const;

  ReceiverConfig config_;
  GrantIssuer issuer_;
  std::vector<SemanticFlow> flows_;  // arrival order: deterministic
  Allocation allocation_;
  AllocationScratch allocation_scratch_;  // reused by every reallocation
  std::vector<GrantTarget> targets_;      // likewise
  bool dirty_ = false;
  TimePs last_allocation_ps_ = 0;
  // Blind arrivals as exponentially decaying rates (unscheduled_window_ps):
  // all of them, and background's alone.
  struct DecayingRate {
    double bps = 0;
    TimePs updated_ps = 0;
    double at(TimePs now, TimePs tau_ps) const;
    void add(std::uint64_t bytes, TimePs now, TimePs tau_ps);
  };
  DecayingRate unscheduled_;
  DecayingRate unscheduled_background_;
  // Ungranted background counts as arriving until then: its last packet plus
  // unscheduled_window_ps (0: none seen).
  TimePs ungranted_background_until_ps_ = 0;
  std::uint64_t reallocations_ = 0;
  std::vector<Announcement> announced_;  // not yet planned, in announcement order
  std::vector<Announcement> planned_;    // planned (in flows_), their flow not started
  std::uint64_t announcements_received_ = 0;
  std::uint64_t announcements_infeasible_ = 0;
  std::uint64_t announcements_dropped_ = 0;
  std::uint64_t announcements_given_up_ = 0;
  // Flows that replaced an announcement, until they end.
  struct AnnouncedFlow {
    FlowId id = 0;
    bool warned = false;
    TimePs announced_no_bubble_ps = kTimeNever;
  };
  std::vector<AnnouncedFlow> announced_flows_;
  AnnouncedOutcomes announced_outcomes_;
  double background_share_ = 1.0;   // long-run share of the budget background got
  double background_rate_bps_ = 0;  // background's total in the allocation in force
  TimePs share_updated_ps_ = 0;
};

}  // namespace safs::core
