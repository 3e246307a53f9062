// The receiver's side of reusable grants: decides which grants to send when.
//
// Safety ordering (break before make): when a reallocation lowers some rates
// and raises others, the decreases go out at once and the increases only one
// control delay after the last decrease, so the senders' rates in effect never
// sum to more than either allocation. An increase with no decrease in flight
// goes out at once.
//
// Only the decreases safety needs: a decrease below theta is not sent, so its
// sender keeps a little more than its share. When a reallocation's increases
// would then overrun the capacity, a background flow's increase takes only
// what is free, and only the largest small decreases that cover the rest go
// (sending all of them cost a grant per flow whenever one fair share moved).
//
// Leases are refreshed only while they are used: a flow granted a rate that
// delivered nothing since its last grant (its sender is in a retransmission
// timeout, or gone) gets no refresh, so control stays bounded by data however
// long a flow stalls under loss. Its lease lapses: the sender falls back to
// its window, and the flow's next data makes it a new flow to grant (until the
// lease's end its rate still counts as in effect, and decreases still go). A paused
// flow (rate 0) is silent by the receiver's choice and is refreshed anyway.
//
// Stream leases: a lease outlives its flow. When a flow on a stream finishes,
// its lease stays with the stream until the lease ends; a new transfer on the
// stream that its sender starts under that lease takes it over, so it starts
// at once at the stream's rate and priority (no blind burst, no grant round
// trip) and is granted only when its rate moves past theta. Until then the
// lease's rate counts as in effect, so the allocation leaves room for it.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "core/grant.h"

namespace safs::core {

struct GrantConfig {
  double change_threshold = 0.1;             // theta: re-send when the rate moves more than this
  TimePs validity_ps = 500 * kPsPerUs;       // lease length
  TimePs refresh_margin_ps = 20 * kPsPerUs;  // re-send when less than this is left
  TimePs control_delay_ps = 5 * kPsPerUs;    // bound on one-way grant delivery
  std::uint64_t cap_slack_bytes = 65536;     // byte cap = rate * validity + this (about one BDP)
  // When increases would take the rates in effect over the capacity: true,
  // background increases wait for free rate and only the small decreases
  // needed go, the largest first; false, every small decrease goes.
  bool only_needed_decreases = true;
};

// Why a grant was issued (GrantIssuer counts them), the first that applies:
// the first grant of a flow the allocation lists anew; a rate again for a
// flow paused at 0 or whose lease lapsed unused; a new priority; a rate up
// or down past theta; a lease refreshed at the same rate.
enum class GrantReason : std::uint8_t {
  kFirst,
  kIncrease,
  kDecrease,
  kPriority,
  kResume,
  kRefresh,
  kCount  // not a reason: how many there are
};
inline constexpr std::size_t kGrantReasons = static_cast<std::size_t>(GrantReason::kCount);
// Lower case, for reports ("first", "increase", ...).
const char* grant_reason_name(GrantReason reason);

// Grants sent, by reason, to urgent and to background flows.
struct GrantCounts {
  std::array<std::uint64_t, kGrantReasons> urgent{};
  std::array<std::uint64_t, kGrantReasons> background{};
};

struct GrantTarget {
  FlowId flow = 0;
  double rate_bps = 0;
  std::uint8_t priority = 0;
  // An urgent flow's increase is never deferred to spare other flows a
  // grant; a background flow's may be (GrantIssuer::update).
  bool urgent = false;
};

class GrantIssuer {
 public:
  explicit GrantIssuer(const GrantConfig& config) : config_(config) {
    // A lease must outlive its refresh margin, or every poll would re-grant.
    config_.refresh_margin_ps = std::min(config_.refresh_margin_ps, config_.validity_ps / 2);
  }

  // A new allocation for every flow at this receiver (flows not listed are
  // gone). Returns the grants to send now; held-back increases come out of
  // due() later. `capacity_bps` is the budget the targets respect: a decrease
  // below the re-send threshold is still sent when, without it, the rates in
  // effect after this update's increases would exceed the capacity. With no
  // capacity given, every such decrease goes whenever any increase does.
  std::vector<Grant> update(const std::vector<GrantTarget>& targets, TimePs now,
                            double capacity_bps = std::numeric_limits<double>::infinity());
  // Held-back increases and lease refreshes whose time has come.
  std::vector<Grant> due(TimePs now);
  // Data of `flow` arrived. True if its lease had lapsed unused: it wants a
  // grant again, at the next update().
  bool note_data(FlowId flow);
  // Every flow's lease lapsed: nothing to refresh, nothing to reallocate for.
  bool all_lapsed() const;
  // When due() will next have something (kTimeNever if nothing is pending).
  TimePs next_due_ps() const;

  // The flow finished on `stream`: its lease, if it has one in effect, stays
  // reserved for the stream's next transfer until it ends.
  void retire(FlowId flow, StreamId stream, TimePs now);
  // A new flow that its sender started under `stream`'s lease takes it over.
  // False if the stream holds none (it ended): the flow is granted as new.
  bool adopt(FlowId flow, StreamId stream);
  // A planned transfer's grant state (its lease, the rate its sender got)
  // passes to the real flow its sender started under that lease. False if
  // `planned` has none.
  bool hand_over(FlowId planned, FlowId flow);
  // Drops stream leases that have ended. True if any did (capacity is free).
  bool expire_streams(TimePs now);
  // The rate the stream leases hold for transfers not started yet.
  double reserved_bps() const;

  std::uint64_t grants_issued() const { return grants_issued_; }
  const GrantCounts& grant_counts() const { return grant_counts_; }

 private:
  struct FlowState {
    double sent_rate_bps = -1;  // last rate sent (-1: none yet)
    std::uint8_t sent_priority = 0;
    bool urgent = false;           // in the latest allocation (for the counts)
    bool lapsed_before = false;    // its lease lapsed unused (for the counts)
    TimePs lease_end_ps = 0;       // as the receiver estimates it
    bool pending = false;          // an increase is held back
    bool listed = false;           // in the current allocation
    bool heard = false;            // data arrived since the last grant
    bool lapsed = false;           // its lease ran out unused: no grant until data
    bool forced_decrease = false;  // a small decrease this update must send (safety)
    GrantTarget pending_target;
    TimePs release_ps = 0;  // when the held-back increase may go
  };

  struct StreamLease {
    double rate_bps = 0;
    std::uint8_t priority = 0;
    // As the receiver estimates it; the sender's may end a control delay later.
    TimePs lease_end_ps = 0;
  };

  Grant issue(FlowState& state, const GrantTarget& target, TimePs now);
  bool differs(const FlowState& state, const GrantTarget& target) const;
  bool is_increase(const FlowState& state, const GrantTarget& target) const;
  // Lowers background increases in adjusted_ (already granted flows, in
  // order) toward their sent rates by up to `excess_bps` in all; returns how
  // much. Those flows get the rest once other flows' changes free it.
  double defer_background_increases(double excess_bps);
  // Marks the fewest small decreases (below theta) in adjusted_ whose cuts
  // cover `excess_bps`, the largest first.
  void force_small_decreases(double excess_bps);
  // Its lease is worth renewing: used since the last grant, or a pause.
  static bool refreshes(const FlowState& state) { return state.heard || state.sent_rate_bps == 0; }

  GrantConfig config_;
  std::map<FlowId, FlowState> flows_;                       // ordered: deterministic output
  std::map<StreamId, StreamLease> streams_;                 // leases left by finished flows
  std::vector<GrantTarget> adjusted_;                       // scratch: this update's targets
  std::vector<std::pair<double, FlowId>> small_decreases_;  // scratch: (cut, flow)
  TimePs increases_allowed_ps_ = 0;  // one control delay after the last decrease
  // Epochs count grants of the whole receiver, so they increase per flow even
  // across a flow's removal and return, with no state kept for gone flows.
  std::uint32_t last_epoch_ = 0;
  std::uint64_t grants_issued_ = 0;
  GrantCounts grant_counts_;
};

}  // namespace safs::core
