// The safe allocator: hand examples of each service step, properties over
// thousands of random flow sets (budget, caps, urgent floors, work
// conservation, determinism, background floor), and end-to-end fluid
// simulations (EDF-feasible sets finish on time, overload lateness close to
// EDF's, nothing starves).
#include "core/allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <vector>

#include "core/demand.h"
#include "core/semantic_flow.h"
#include "core/types.h"

namespace safs::core {
namespace {

constexpr TimePs kUs = kPsPerUs;
constexpr TimePs kMs = 1000 * kPsPerUs;
constexpr TimePs kSecond = 1000 * kMs;
constexpr double kGbps = 1e9;
constexpr double kInf = std::numeric_limits<double>::infinity();

SemanticFlow urgent(FlowId id, std::uint64_t bytes, TimePs no_bubble, std::uint32_t crit = 0) {
  SemanticFlow f;
  f.id = id;
  f.size_bytes = bytes;
  f.remaining_bytes = bytes;
  f.no_bubble_ps = no_bubble;
  f.urgency = Urgency::kUrgent;
  f.criticality = crit;
  return f;
}

SemanticFlow background(FlowId id, std::uint64_t bytes, double cap = kInf) {
  SemanticFlow f;
  f.id = id;
  f.size_bytes = bytes;
  f.remaining_bytes = bytes;
  f.urgency = Urgency::kBackground;
  f.sender_cap_bps = cap;
  return f;
}

const FlowAllocation& by_id(const Allocation& a, FlowId id) {
  for (const FlowAllocation& f : a.flows) {
    if (f.id == id) return f;
  }
  ADD_FAILURE() << "no flow " << id;
  return a.flows.front();
}

double cap_of(const SemanticFlow& f, const AllocatorConfig& c) {
  return f.remaining_bytes > 0 ? std::min(c.link_bps, f.sender_cap_bps) : 0.0;
}

// The urgent service order the allocator documents: criticality desc, then
// no-bubble time asc, then dependency, then id.
bool serves_before(const SemanticFlow& a, const SemanticFlow& b) {
  if (a.criticality != b.criticality) return a.criticality > b.criticality;
  if (a.no_bubble_ps != b.no_bubble_ps) return a.no_bubble_ps < b.no_bubble_ps;
  if (a.dependency != b.dependency) return a.dependency < b.dependency;
  return a.id < b.id;
}

// ---------------------------------------------------------------------------
// Hand examples.

TEST(AllocatorTest, EmptyInput) {
  const AllocatorConfig c;
  const Allocation a = allocate({}, 0, 0.0, c);
  EXPECT_TRUE(a.flows.empty());
  EXPECT_DOUBLE_EQ(a.budget_bps, 0.97 * 100e9);
  EXPECT_EQ(a.total_bps(), 0.0);
  EXPECT_TRUE(a.urgent_feasible);
  EXPECT_EQ(a.overdue, 0u);
}

TEST(AllocatorTest, BudgetIsUsableLessUnscheduledAndNeverNegative) {
  AllocatorConfig c;
  c.link_bps = 200 * kGbps;
  c.usable_fraction = 0.9;
  const std::vector<SemanticFlow> flows = {background(1, 1'000'000), background(2, 1'000'000)};
  const Allocation a = allocate(flows, 0, 30 * kGbps, c);
  EXPECT_DOUBLE_EQ(a.budget_bps, 150 * kGbps);
  EXPECT_NEAR(a.total_bps(), 150 * kGbps, 1.0);

  const Allocation none = allocate(flows, 0, 500 * kGbps, c);
  EXPECT_EQ(none.budget_bps, 0.0);
  for (const FlowAllocation& f : none.flows) EXPECT_EQ(f.rate_bps, 0.0);
}

TEST(AllocatorTest, BackgroundMaxMinFairWithCaps) {
  const AllocatorConfig c;  // budget 97 Gbit/s
  const std::vector<SemanticFlow> flows = {background(1, 1'000'000, 10 * kGbps),
                                           background(2, 5'000'000), background(3, 2'000'000),
                                           background(4, 0)};
  const Allocation a = allocate(flows, 0, 0.0, c);
  ASSERT_EQ(a.flows.size(), 4u);
  EXPECT_EQ(a.flows[0].id, 1u);  // input order
  EXPECT_EQ(a.flows[3].id, 4u);
  EXPECT_NEAR(a.flows[0].rate_bps, 10 * kGbps, 1e-3);
  EXPECT_NEAR(a.flows[1].rate_bps, 43.5 * kGbps, 1e-3);
  EXPECT_NEAR(a.flows[2].rate_bps, 43.5 * kGbps, 1e-3);
  EXPECT_EQ(a.flows[3].rate_bps, 0.0);  // nothing left to send
  EXPECT_FALSE(a.flows[0].urgent);
}

TEST(AllocatorTest, BackgroundShortestRemainingFirst) {
  AllocatorConfig c;
  c.background = BackgroundPolicy::kShortestRemainingFirst;
  const std::vector<SemanticFlow> flows = {background(1, 3'000'000, 40 * kGbps),
                                           background(2, 1'000'000, 40 * kGbps),
                                           background(3, 2'000'000, 40 * kGbps)};
  const Allocation a = allocate(flows, 0, 0.0, c);
  EXPECT_NEAR(by_id(a, 2).rate_bps, 40 * kGbps, 1e-3);
  EXPECT_NEAR(by_id(a, 3).rate_bps, 40 * kGbps, 1e-3);
  EXPECT_NEAR(by_id(a, 1).rate_bps, 17 * kGbps, 1e-3);
}

// An urgent flow with slack gets exactly its no-bubble demand; the rest of
// the budget goes to background.
TEST(AllocatorTest, UrgentGetsDemandBackgroundGetsTheRest) {
  const AllocatorConfig c;
  const TimePs now = 3 * kMs;
  // 1 MB with 1 ms after the headroom: 8.8 Gbit/s with the 1.1 margin.
  const std::vector<SemanticFlow> flows = {background(7, 50'000'000),
                                           urgent(8, 1'000'000, now + c.demand.headroom_ps + kMs)};
  const Allocation a = allocate(flows, now, 0.0, c);
  EXPECT_NEAR(by_id(a, 8).rate_bps, 8.8 * kGbps, 1.0);
  EXPECT_NEAR(by_id(a, 8).demand.rate_bps, 8.8 * kGbps, 1.0);
  EXPECT_TRUE(by_id(a, 8).urgent);
  EXPECT_NEAR(by_id(a, 7).rate_bps, (97 - 8.8) * kGbps, 1.0);
  EXPECT_TRUE(a.urgent_feasible);
  EXPECT_EQ(a.overdue, 0u);
}

// With no background to allocate, the leftover tops up the urgent flow past
// its demand (work conservation); while background the receiver does not
// grant is arriving, it is left free for that background instead.
TEST(AllocatorTest, LeftoverStaysFreeForUngrantedBackground) {
  const AllocatorConfig c;
  const TimePs now = 3 * kMs;
  const std::vector<SemanticFlow> flows = {urgent(8, 1'000'000, now + c.demand.headroom_ps + kMs)};
  Allocation a;
  AllocationScratch scratch;
  allocate_into(flows, now, {}, c, a, scratch);
  EXPECT_NEAR(a.flows[0].rate_bps, 97 * kGbps, 1.0);
  allocate_into(flows, now, {.ungranted_background = true}, c, a, scratch);
  EXPECT_NEAR(a.flows[0].rate_bps, 8.8 * kGbps, 1.0);  // its no-bubble demand only
}

// A low-slack urgent flow is topped up to its cap before background flows
// get anything beyond their floor; an urgent flow with slack is not.
TEST(AllocatorTest, LowSlackUrgentToppedUpBeforeBackground) {
  const AllocatorConfig c;  // rtt 10 us
  const TimePs now = 0;
  // 5 MB at a 50 Gbit/s sender cap: 800 us at line. Window 890 us: demand
  // 1.1 * 4e7 / 890e-6 = 49.4 Gbit/s (under the cap), slack 90 us < the
  // low-slack threshold 2 * 10 us + 80 us.
  SemanticFlow tight = urgent(1, 5'000'000, now + c.demand.headroom_ps + 890 * kUs);
  tight.sender_cap_bps = 50 * kGbps;
  const SemanticFlow relaxed = urgent(2, 1'000'000, now + c.demand.headroom_ps + kMs);
  const std::vector<SemanticFlow> flows = {background(3, 50'000'000), tight, relaxed};
  const Allocation a = allocate(flows, now, 0.0, c);
  EXPECT_NEAR(by_id(a, 1).demand.rate_bps, 1.1 * 4e7 / 890e-6, 1e3);
  EXPECT_LT(by_id(a, 1).demand.rate_bps, 50 * kGbps);
  EXPECT_NEAR(by_id(a, 1).rate_bps, 50 * kGbps, 1.0);   // topped up to its cap
  EXPECT_NEAR(by_id(a, 2).rate_bps, 8.8 * kGbps, 1.0);  // only its demand
  EXPECT_NEAR(by_id(a, 3).rate_bps, (97 - 50 - 8.8) * kGbps, 1.0);
}

// An urgent flow without a timestamp takes the leftover after the timed
// urgent floors and before background, which keeps only its floor; with
// untimed_urgent_before_background off, background goes first, as for an
// urgent flow with slack.
TEST(AllocatorTest, UntimedUrgentServedAheadOfBackground) {
  AllocatorConfig c;
  const TimePs now = 0;
  const std::vector<SemanticFlow> flows = {background(1, 50'000'000),
                                           urgent(2, 1'000'000, now + c.demand.headroom_ps + kMs),
                                           urgent(3, 20'000'000, kTimeNever)};
  const Allocation a = allocate(flows, now, 0.0, c);
  EXPECT_NEAR(by_id(a, 2).rate_bps, 8.8 * kGbps, 1.0);  // its no-bubble rate
  EXPECT_NEAR(by_id(a, 1).rate_bps, a.background_floor_bps, 1.0);
  EXPECT_NEAR(by_id(a, 3).rate_bps, a.budget_bps - 8.8 * kGbps - a.background_floor_bps, 1.0);
  EXPECT_TRUE(by_id(a, 3).urgent);
  EXPECT_EQ(by_id(a, 3).urgent_rank, 1u);  // after the timed one

  c.untimed_urgent_before_background = false;
  const Allocation off = allocate(flows, now, 0.0, c);
  EXPECT_NEAR(by_id(off, 1).rate_bps, off.budget_bps - 8.8 * kGbps, 1.0);
  EXPECT_NEAR(by_id(off, 3).rate_bps, 0.0, 1.0);
}

// Without background flows, the leftover goes to urgent flows in service
// order (work conservation).
TEST(AllocatorTest, LeftoverGoesToUrgentInServiceOrderWithoutBackground) {
  const AllocatorConfig c;
  const TimePs now = 0;
  const std::vector<SemanticFlow> flows = {
      urgent(1, 1'000'000, now + c.demand.headroom_ps + 2 * kMs),  // 4.4 Gbit/s, second
      urgent(2, 1'000'000, now + c.demand.headroom_ps + kMs)};     // 8.8 Gbit/s, first
  const Allocation a = allocate(flows, now, 0.0, c);
  EXPECT_EQ(by_id(a, 2).urgent_rank, 0u);
  EXPECT_EQ(by_id(a, 1).urgent_rank, 1u);
  EXPECT_NEAR(by_id(a, 1).rate_bps, 4.4 * kGbps, 1.0);
  EXPECT_NEAR(by_id(a, 2).rate_bps, (97 - 4.4) * kGbps, 1.0);
  EXPECT_NEAR(a.total_bps(), 97 * kGbps, 1.0);
}

// Under overload a critical flow with a later timestamp is served before a
// non-critical one with an earlier timestamp.
TEST(AllocatorTest, CriticalityOutranksDeadlineUnderOverload) {
  const AllocatorConfig c;  // budget 97 Gbit/s
  const TimePs now = kMs;
  // Both want 88 Gbit/s (5 MB in 0.5 ms and 10 MB in 1 ms); the link has 100.
  const SemanticFlow early = urgent(1, 5'000'000, now + c.demand.headroom_ps + kMs / 2, 0);
  const SemanticFlow critical_late = urgent(2, 10'000'000, now + c.demand.headroom_ps + kMs, 1);
  const Allocation a = allocate({early, critical_late}, now, 0.0, c);
  EXPECT_FALSE(a.urgent_feasible);
  EXPECT_DOUBLE_EQ(a.budget_bps, 100 * kGbps);  // overload: the whole link
  EXPECT_EQ(by_id(a, 2).urgent_rank, 0u);
  EXPECT_EQ(by_id(a, 1).urgent_rank, 1u);
  EXPECT_NEAR(by_id(a, 2).rate_bps, 88 * kGbps, 1e3);
  EXPECT_NEAR(by_id(a, 1).rate_bps, 12 * kGbps, 1e3);

  // Same criticality: the earlier timestamp goes first.
  SemanticFlow plain_late = critical_late;
  plain_late.criticality = 0;
  const Allocation b = allocate({early, plain_late}, now, 0.0, c);
  EXPECT_EQ(by_id(b, 1).urgent_rank, 0u);
  EXPECT_NEAR(by_id(b, 1).rate_bps, 88 * kGbps, 1e3);
  EXPECT_NEAR(by_id(b, 2).rate_bps, 12 * kGbps, 1e3);
}

TEST(AllocatorTest, OverdueFlowsAreCountedAndServedAtLine) {
  AllocatorConfig c;
  c.link_bps = 40 * kGbps;
  const TimePs now = 10 * kMs;
  const std::vector<SemanticFlow> flows = {urgent(1, 1'000'000, now - kMs),
                                           urgent(2, 1'000'000, now + c.demand.headroom_ps),
                                           urgent(3, 1'000'000, now + 10 * kMs)};
  const Allocation a = allocate(flows, now, 0.0, c);
  EXPECT_EQ(a.overdue, 2u);
  EXPECT_TRUE(by_id(a, 1).demand.overdue);
  EXPECT_TRUE(by_id(a, 2).demand.overdue);
  EXPECT_FALSE(by_id(a, 3).demand.overdue);
  EXPECT_DOUBLE_EQ(by_id(a, 1).demand.rate_bps, 40 * kGbps);
  // Overload: the budget is the whole link, and the first overdue flow takes
  // all of it; the others get nothing.
  EXPECT_FALSE(a.urgent_feasible);
  EXPECT_DOUBLE_EQ(a.budget_bps, 40 * kGbps);
  EXPECT_NEAR(by_id(a, 1).rate_bps, 40 * kGbps, 1.0);
  EXPECT_EQ(by_id(a, 2).rate_bps, 0.0);
  EXPECT_EQ(by_id(a, 3).rate_bps, 0.0);
}

// Overload (the urgent set fails the EDF test at the normal urgent budget):
// the budget becomes overload_usable_fraction of the link, and the
// background floor is dropped unless the caller protects it.
TEST(AllocatorTest, OverloadBudgetAndBackgroundFloor) {
  AllocatorConfig c;  // usable 0.97, overload 1.0, floor 1%
  const TimePs now = 10 * kMs;
  const double unscheduled = 5 * kGbps;
  const std::vector<SemanticFlow> overload = {urgent(1, 100'000'000, now + kMs),
                                              background(2, 1'000'000)};
  const Allocation unprotected = allocate(overload, now, unscheduled, c, false);
  EXPECT_FALSE(unprotected.urgent_feasible);
  EXPECT_DOUBLE_EQ(unprotected.budget_bps, 95 * kGbps);
  EXPECT_EQ(unprotected.background_floor_bps, 0.0);
  EXPECT_NEAR(by_id(unprotected, 1).rate_bps, 95 * kGbps, 1.0);
  EXPECT_EQ(by_id(unprotected, 2).rate_bps, 0.0);

  const Allocation protected_ = allocate(overload, now, unscheduled, c, true);
  EXPECT_FALSE(protected_.urgent_feasible);
  EXPECT_DOUBLE_EQ(protected_.budget_bps, 95 * kGbps);
  EXPECT_DOUBLE_EQ(protected_.background_floor_bps, 0.95 * kGbps);
  EXPECT_NEAR(by_id(protected_, 2).rate_bps, 0.95 * kGbps, 1.0);
  EXPECT_NEAR(by_id(protected_, 1).rate_bps, 94.05 * kGbps, 1.0);
  EXPECT_LE(protected_.total_bps(), 95 * kGbps * (1 + 1e-12));

  c.overload_usable_fraction = 0.99;
  EXPECT_DOUBLE_EQ(allocate(overload, now, unscheduled, c, false).budget_bps, 94 * kGbps);

  // Feasible: the normal budget and floor, whatever the caller asks.
  const std::vector<SemanticFlow> light = {urgent(1, 1'000'000, now + kMs),
                                           background(2, 1'000'000)};
  for (const bool protect : {false, true}) {
    const Allocation a = allocate(light, now, unscheduled, c, protect);
    EXPECT_TRUE(a.urgent_feasible);
    EXPECT_DOUBLE_EQ(a.budget_bps, 92 * kGbps);
    EXPECT_DOUBLE_EQ(a.background_floor_bps, 0.92 * kGbps);
    EXPECT_NEAR(a.total_bps(), 92 * kGbps, 1.0);
  }
}

TEST(AllocatorTest, EdfFeasibleHandExamples) {
  const double cap = 10 * kGbps;
  const TimePs now = 5 * kMs;
  // 1.25 MB at 10 Gbit/s = 1 ms exactly.
  EXPECT_TRUE(edf_feasible({urgent(1, 1'250'000, now + kMs)}, now, cap, 0));
  EXPECT_FALSE(edf_feasible({urgent(1, 1'250'000, now + kMs - 10)}, now, cap, 0));
  EXPECT_FALSE(edf_feasible({urgent(1, 1'250'000, now + kMs)}, now, cap, 10));  // headroom
  EXPECT_TRUE(edf_feasible({urgent(1, 1'250'000, now + kMs + 10 * kUs)}, now, cap, 10 * kUs));
  // Prefixes: 1 ms by 1.5 ms, then 2 ms of bytes by 2 ms; one more byte fails.
  EXPECT_TRUE(edf_feasible(
      {urgent(2, 1'250'000, now + 2 * kMs), urgent(1, 1'250'000, now + 1500 * kUs)}, now, cap, 0));
  EXPECT_FALSE(edf_feasible(
      {urgent(2, 1'250'001, now + 2 * kMs), urgent(1, 1'250'000, now + 1500 * kUs)}, now, cap, 0));
  // Each fits alone in deadline order, but not together.
  EXPECT_FALSE(edf_feasible({urgent(1, 1'000'000, now + kMs), urgent(2, 1'000'000, now + kMs)}, now,
                            cap, 0));
  // Background and finished flows do not count; an empty set is feasible.
  EXPECT_TRUE(edf_feasible({background(3, 100'000'000), urgent(4, 0, now - kMs)}, now, cap, 0));
  EXPECT_TRUE(edf_feasible({}, now, cap, 0));
  // A timestamp already past is infeasible; so is zero capacity.
  EXPECT_FALSE(edf_feasible({urgent(1, 1, now)}, now, cap, 0));
  EXPECT_FALSE(edf_feasible({urgent(1, 1, now + kMs)}, now, 0.0, 0));
}

// Regression: feasibility is pure EDF. It once followed the service order
// (criticality first), so a set EDF finishes on time was called infeasible
// when a critical flow had the later timestamp, and allocate() dropped its
// headroom and the background floor for a set that was not overloaded.
TEST(AllocatorTest, EdfFeasibleIgnoresCriticality) {
  const double cap = 10 * kGbps;
  // EDF: 1.25 MB by 1 ms, then 2.5 MB by 2 ms: feasible at 10 Gbit/s.
  // Criticality order puts the 2 ms flow first: 1.25 MB + 1.25 MB by 1 ms fails.
  const std::vector<SemanticFlow> flows = {urgent(1, 1'250'000, kMs, 0),
                                           urgent(2, 1'250'000, 2 * kMs, 1)};
  EXPECT_TRUE(edf_feasible(flows, 0, cap, 0));

  // In allocate(): 10 MB due in 1 ms and a critical 5 MB due in 3 ms fit in
  // deadline order at the urgent budget (96.03 Gbit/s: done by 0.83 ms and
  // 1.25 ms), but not in criticality order (the 10 MB would finish at 1.25 ms).
  const AllocatorConfig c;
  const std::vector<SemanticFlow> mixed = {urgent(1, 10'000'000, c.demand.headroom_ps + kMs, 0),
                                           urgent(2, 5'000'000, c.demand.headroom_ps + 3 * kMs, 1),
                                           background(3, 1'000'000)};
  const Allocation a = allocate(mixed, 0, 0.0, c, /*protect_background=*/false);
  EXPECT_TRUE(a.urgent_feasible);
  EXPECT_DOUBLE_EQ(a.budget_bps, 97 * kGbps);
  EXPECT_GT(a.background_floor_bps, 0.0);
}

// The background floor is reserved: no urgent top-up (step 3a) may eat it.
// (Regression: the floor used to be part of the leftover handed to low-slack
// urgent flows, so an overdue urgent flow took it and background got 0.)
// Link 100G, one overdue 100 MB urgent flow, one background flow, with
// protect_background: background gets its 1 Gbit/s floor.
TEST(AllocatorTest, BackgroundFloorSurvivesOverdueUrgentFlow) {
  const AllocatorConfig c;
  const TimePs now = 10 * kMs;
  const std::vector<SemanticFlow> flows = {urgent(1, 100'000'000, now - kMs),
                                           background(2, 1'000'000)};
  const Allocation a = allocate(flows, now, 0.0, c, /*protect_background=*/true);
  EXPECT_DOUBLE_EQ(a.background_floor_bps, 1 * kGbps);
  EXPECT_GE(by_id(a, 2).rate_bps, a.background_floor_bps * (1 - 1e-12));
  EXPECT_NEAR(by_id(a, 1).rate_bps, 99 * kGbps, 1.0);
  EXPECT_LE(a.total_bps(), a.budget_bps * (1 + 1e-12));
}

// The same in the feasible regime: a single low-slack urgent flow that EDF
// finishes on time at the urgent budget still takes the background floor.
// 10 MB due in 890 us (+ headroom): 833 us at 96.03 Gbit/s, so feasible;
// demand 98.9 Gbit/s > the urgent budget, slack 90 us < 100 us (low).
TEST(AllocatorTest, BackgroundFloorSurvivesLowSlackFeasibleFlow) {
  const AllocatorConfig c;
  const TimePs now = 0;
  const std::vector<SemanticFlow> flows = {
      urgent(1, 10'000'000, now + c.demand.headroom_ps + 890 * kUs), background(2, 1'000'000)};
  const Allocation a = allocate(flows, now, 0.0, c);
  ASSERT_TRUE(a.urgent_feasible);
  EXPECT_NEAR(a.background_floor_bps, 0.97 * kGbps, 1.0);
  EXPECT_GE(by_id(a, 2).rate_bps, a.background_floor_bps * (1 - 1e-12));
  EXPECT_NEAR(by_id(a, 1).rate_bps, (97 - 0.97) * kGbps, 1.0);
}

// urgent_first: each urgent flow takes all it can in service order (EDF at
// line rate); background gets only its floor while urgent flows can use more.
TEST(AllocatorTest, UrgentFirstServesUrgentAtLineRate) {
  AllocatorConfig c;
  c.urgent_first = true;
  const TimePs now = 0;
  SemanticFlow first = urgent(1, 1'000'000, now + c.demand.headroom_ps + kMs);  // demand 8.8G
  first.sender_cap_bps = 60 * kGbps;
  const SemanticFlow second = urgent(2, 1'000'000, now + c.demand.headroom_ps + 2 * kMs);
  const std::vector<SemanticFlow> flows = {background(3, 50'000'000), second, first};
  const Allocation a = allocate(flows, now, 0.0, c);
  EXPECT_TRUE(a.urgent_feasible);
  EXPECT_NEAR(by_id(a, 1).rate_bps, 60 * kGbps, 1.0);  // its cap
  EXPECT_NEAR(by_id(a, 2).rate_bps, (97 - 0.97 - 60) * kGbps,
              1.0);                                      // the rest of the urgent budget
  EXPECT_NEAR(by_id(a, 3).rate_bps, 0.97 * kGbps, 1.0);  // the floor only

  // The default ("just in time") gives urgent flows their demand and
  // background the rest.
  c.urgent_first = false;
  const Allocation jit = allocate(flows, now, 0.0, c);
  EXPECT_NEAR(by_id(jit, 1).rate_bps, 8.8 * kGbps, 1.0);
  EXPECT_NEAR(by_id(jit, 2).rate_bps, 4.4 * kGbps, 1.0);
  EXPECT_NEAR(by_id(jit, 3).rate_bps, (97 - 13.2) * kGbps, 1.0);
}

// slack_adaptive: a flow that cannot afford to be paced (its remaining bytes
// within one BDP, or its slack under line_rate_slack_rtts RTTs) takes all it
// can in service order; one with ample slack gets its no-bubble rate.
TEST(AllocatorTest, SlackAdaptiveServesShortAndLowSlackFlowsAtLineRate) {
  AllocatorConfig c;
  c.slack_adaptive = true;  // 100 Gbit/s, RTT 10 us: a BDP is 125 KB
  const TimePs now = 0;
  // 10 MB due 2 ms after the headroom: demand 44 Gbit/s, slack 1.2 ms.
  const SemanticFlow ample = urgent(1, 10'000'000, now + c.demand.headroom_ps + 2 * kMs);
  // 100 KB due 5 ms after the headroom: demand 0.176 Gbit/s, but one BDP.
  const SemanticFlow short_flow = urgent(2, 100'000, now + c.demand.headroom_ps + 5 * kMs);
  const std::vector<SemanticFlow> flows = {background(3, 50'000'000), short_flow, ample};
  const Allocation a = allocate(flows, now, 0.0, c);
  EXPECT_NEAR(by_id(a, 1).rate_bps, 44 * kGbps, 1.0);  // its demand
  EXPECT_NEAR(by_id(a, 2).rate_bps, (97 - 0.97 - 44) * kGbps,
              1.0);                                      // the rest of the urgent budget
  EXPECT_NEAR(by_id(a, 3).rate_bps, 0.97 * kGbps, 1.0);  // the floor only

  // 1 MB due 110 us after the headroom: demand 80 Gbit/s, below line rate,
  // but 30 us of slack (under 4 RTTs): it takes all it can, ahead of the
  // short flow it precedes in service order.
  const SemanticFlow tight = urgent(4, 1'000'000, now + c.demand.headroom_ps + 110 * kUs);
  const std::vector<SemanticFlow> tight_flows = {background(3, 50'000'000), short_flow, tight};
  const Allocation b = allocate(tight_flows, now, 0.0, c);
  EXPECT_NEAR(by_id(b, 4).rate_bps, (97 - 0.97) * kGbps, 1.0);
  EXPECT_NEAR(by_id(b, 2).rate_bps, 0.0, 1.0);
  // Untimed, the short flow keeps its own place: here (untimed flows after
  // background) behind the background flow, not at line rate.
  SemanticFlow untimed = short_flow;
  untimed.no_bubble_ps = kTimeNever;
  AllocatorConfig untimed_last = c;
  untimed_last.untimed_urgent_before_background = false;
  const Allocation u =
      allocate({background(3, 50'000'000), untimed, ample}, now, 0.0, untimed_last);
  EXPECT_NEAR(by_id(u, 2).rate_bps, 0.0, 1.0);
  EXPECT_NEAR(by_id(u, 3).rate_bps, (97 - 44) * kGbps, 1.0);

  // Without it both get their demands and background the rest.
  c.slack_adaptive = false;
  const Allocation jit = allocate(flows, now, 0.0, c);
  EXPECT_NEAR(by_id(jit, 1).rate_bps, 44 * kGbps, 1.0);
  EXPECT_NEAR(by_id(jit, 2).rate_bps, 0.176 * kGbps, 1.0);
  EXPECT_NEAR(by_id(jit, 3).rate_bps, (97 - 44 - 0.176) * kGbps, 1.0);
  const Allocation jit_tight = allocate(tight_flows, now, 0.0, c);
  EXPECT_NEAR(by_id(jit_tight, 4).rate_bps, 80 * kGbps, 1.0);
  EXPECT_NEAR(by_id(jit_tight, 2).rate_bps, 0.176 * kGbps, 1.0);
}

// ---------------------------------------------------------------------------
// Properties over random flow sets.

struct Instance {
  std::vector<SemanticFlow> flows;
  TimePs now = 0;
  double unscheduled_bps = 0;
  AllocatorConfig config;
  bool protect_background = true;
};

double log_uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::exp(std::uniform_real_distribution<double>(std::log(lo), std::log(hi))(rng));
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return std::uniform_real_distribution<double>(lo, hi)(rng);
}

bool chance(std::mt19937_64& rng, double p) { return uniform(rng, 0, 1) < p; }

Instance random_instance(std::mt19937_64& rng) {
  Instance in;
  in.now = kMs * 1000 + static_cast<TimePs>(rng() % (100 * kMs));
  AllocatorConfig& c = in.config;
  c.link_bps = uniform(rng, 10, 400) * kGbps;
  c.usable_fraction = uniform(rng, 0.85, 1.0);
  c.overload_usable_fraction = chance(rng, 0.3) ? 1.0 : uniform(rng, c.usable_fraction, 1.0);
  in.protect_background = chance(rng, 0.5);
  c.urgent_first = chance(rng, 0.3);
  // A third of the others per flow between the two (no draw of its own, so
  // the instances stay those the other properties were written against).
  c.slack_adaptive = !c.urgent_first && in.now % 3 == 0;
  c.background_floor_fraction = uniform(rng, 0.005, 0.05);
  c.background =
      chance(rng, 0.5) ? BackgroundPolicy::kMaxMinFair : BackgroundPolicy::kShortestRemainingFirst;
  const double usable = c.usable_fraction * c.link_bps;
  const double u = uniform(rng, 0, 1);
  in.unscheduled_bps = u < 0.3    ? 0.0
                       : u < 0.93 ? uniform(rng, 0, 0.3 * usable)
                                  : uniform(rng, 0.9 * usable, 1.5 * usable);
  const int n = static_cast<int>(rng() % 21);
  std::set<FlowId> ids;
  for (int k = 0; k < n; ++k) {
    SemanticFlow f;
    do {
      f.id = rng() % 1000;
    } while (!ids.insert(f.id).second);
    f.sender = static_cast<std::uint32_t>(rng() % 8);
    f.size_bytes = static_cast<std::uint64_t>(log_uniform(rng, 1e3, 1e8));
    f.remaining_bytes = chance(rng, 0.08)
                            ? 0
                            : std::max<std::uint64_t>(
                                  1, static_cast<std::uint64_t>(static_cast<double>(f.size_bytes) *
                                                                uniform(rng, 0.05, 1.0)));
    f.criticality = static_cast<std::uint32_t>(rng() % 2);
    if (chance(rng, 0.65)) {
      f.urgency = Urgency::kUrgent;
      f.no_bubble_ps =
          chance(rng, 0.8)
              ? in.now + static_cast<TimePs>(log_uniform(rng, 0.1, 50) * static_cast<double>(kMs))
              : in.now + static_cast<TimePs>(uniform(rng, -2000, 12) * static_cast<double>(kUs));
      f.dependency = rng() % 4;
    }
    if (chance(rng, 0.5)) f.sender_cap_bps = uniform(rng, 0.5, 1.2 * c.link_bps / kGbps) * kGbps;
    in.flows.push_back(f);
  }
  return in;
}

struct PropertyStats {
  int instances = 0;
  int urgent_fits = 0;      // premise of (b) held with urgent flows present
  int under_budget = 0;     // premise of (c) held with active flows present
  int with_background = 0;  // premise of (e)
  int with_overdue = 0;
  int overload = 0;
};

Allocation allocate_instance(const Instance& in, const std::vector<SemanticFlow>& flows) {
  return allocate(flows, in.now, in.unscheduled_bps, in.config, in.protect_background);
}

void check_properties(const Instance& in, std::mt19937_64& rng, PropertyStats& stats) {
  const AllocatorConfig& c = in.config;
  const Allocation a = allocate_instance(in, in.flows);
  ++stats.instances;
  ASSERT_EQ(a.flows.size(), in.flows.size());
  // Budget: usable fraction of the link less the unscheduled reserve; under
  // overload (EDF test fails at the normal urgent budget) the overload fraction.
  const bool has_background =
      std::any_of(in.flows.begin(), in.flows.end(),
                  [](const SemanticFlow& f) { return !f.urgent() && f.remaining_bytes > 0; });
  const double normal = std::max(0.0, c.usable_fraction * c.link_bps - in.unscheduled_bps);
  const double normal_floor = has_background ? c.background_floor_fraction * normal : 0.0;
  const bool feasible = edf_feasible(in.flows, in.now, normal - normal_floor, c.demand.headroom_ps);
  ASSERT_EQ(a.urgent_feasible, feasible);
  const double budget =
      feasible ? normal
               : std::max(0.0, c.overload_usable_fraction * c.link_bps - in.unscheduled_bps);
  ASSERT_DOUBLE_EQ(a.budget_bps, budget);
  const double floor = has_background && (feasible || in.protect_background)
                           ? c.background_floor_fraction * budget
                           : 0.0;
  ASSERT_DOUBLE_EQ(a.background_floor_bps, floor);
  if (!feasible) ++stats.overload;

  // (a) Safe: total within the budget, no negative rate, nothing above the cap.
  const double total = a.total_bps();
  ASSERT_LE(total, budget * (1 + 1e-6));
  bool any_background = false;
  double urgent_demand = 0;
  bool any_urgent = false, any_active = false;
  std::uint32_t overdue = 0;
  for (std::size_t i = 0; i < in.flows.size(); ++i) {
    const SemanticFlow& f = in.flows[i];
    const FlowAllocation& fa = a.flows[i];
    ASSERT_EQ(fa.id, f.id);
    ASSERT_EQ(fa.urgent, f.urgent());
    ASSERT_GE(fa.rate_bps, 0.0);
    ASSERT_LE(fa.rate_bps, std::min(c.link_bps, f.sender_cap_bps) * (1 + 1e-12));
    if (f.remaining_bytes == 0) {
      ASSERT_EQ(fa.rate_bps, 0.0);
      continue;
    }
    any_active = true;
    const Demand d = no_bubble_demand(f, in.now, cap_of(f, c), c.demand);
    ASSERT_EQ(fa.demand.rate_bps, d.rate_bps);
    ASSERT_EQ(fa.demand.overdue, d.overdue);
    if (f.urgent()) {
      any_urgent = true;
      urgent_demand += std::min(d.rate_bps, cap_of(f, c));
      if (d.overdue) ++overdue;
    } else {
      any_background = true;
    }
  }
  ASSERT_EQ(a.overdue, overdue);
  if (overdue > 0) ++stats.with_overdue;

  ASSERT_EQ(any_background, has_background);
  // (b) Urgent floors: if the urgent demands fit, every urgent flow gets its
  // demand (urgent_first: each gets all it can in order, checked below;
  // slack_adaptive: a flow at line rate may take a later flow's floor, as
  // EDF would; the fluid tests check that deadlines still hold).
  if (!c.urgent_first && !c.slack_adaptive && urgent_demand <= (budget - floor) * (1 - 1e-12)) {
    if (any_urgent) ++stats.urgent_fits;
    for (std::size_t i = 0; i < in.flows.size(); ++i) {
      if (!in.flows[i].urgent() || in.flows[i].remaining_bytes == 0) continue;
      ASSERT_GE(a.flows[i].rate_bps, a.flows[i].demand.rate_bps * (1 - 1e-12))
          << "flow " << in.flows[i].id;
    }
  }

  // (c) Work conservation: budget left over only when everyone is at its cap.
  if (total < budget * (1 - 1e-9)) {
    if (any_active) ++stats.under_budget;
    for (std::size_t i = 0; i < in.flows.size(); ++i) {
      ASSERT_GE(a.flows[i].rate_bps, cap_of(in.flows[i], c) * (1 - 1e-9))
          << "flow " << in.flows[i].id << " below its cap with " << budget - total << " unused";
    }
  }
  if (any_background && budget > 0) ++stats.with_background;

  // (d) Determinism: the same input gives bit-identical output...
  const Allocation again = allocate_instance(in, in.flows);
  ASSERT_EQ(again.urgent_feasible, a.urgent_feasible);
  for (std::size_t i = 0; i < in.flows.size(); ++i) {
    ASSERT_EQ(again.flows[i].rate_bps, a.flows[i].rate_bps);
    ASSERT_EQ(again.flows[i].urgent_rank, a.flows[i].urgent_rank);
  }
  // ...and the input order does not matter.
  std::vector<SemanticFlow> shuffled = in.flows;
  std::shuffle(shuffled.begin(), shuffled.end(), rng);
  const Allocation s = allocate_instance(in, shuffled);
  ASSERT_EQ(s.urgent_feasible, a.urgent_feasible);
  ASSERT_EQ(s.overdue, a.overdue);
  ASSERT_NEAR(s.budget_bps, a.budget_bps, 0.0);
  std::map<FlowId, const FlowAllocation*> original;
  for (const FlowAllocation& fa : a.flows) original[fa.id] = &fa;
  for (std::size_t i = 0; i < shuffled.size(); ++i) {
    ASSERT_EQ(s.flows[i].id, shuffled[i].id);
    const FlowAllocation& o = *original.at(s.flows[i].id);
    const double tol = 1e-9 * std::max(std::abs(o.rate_bps), std::abs(s.flows[i].rate_bps)) + 1e-6;
    ASSERT_NEAR(s.flows[i].rate_bps, o.rate_bps, tol) << "flow " << o.id;
    if (o.urgent && shuffled[i].remaining_bytes > 0) {
      ASSERT_EQ(s.flows[i].urgent_rank, o.urgent_rank);
    }
  }
}

TEST(AllocatorPropertyTest, SafeFloorsWorkConservingDeterministic) {
  std::mt19937_64 rng(20240611);
  PropertyStats stats;
  for (int iter = 0; iter < 5000; ++iter) {
    const Instance in = random_instance(rng);
    ASSERT_NO_FATAL_FAILURE(check_properties(in, rng, stats)) << "instance " << iter;
  }
  // The random sets exercise every premise often enough to mean something.
  EXPECT_GT(stats.urgent_fits, 500);
  EXPECT_GT(stats.under_budget, 100);
  EXPECT_GT(stats.with_background, 1000);
  EXPECT_GT(stats.with_overdue, 500);
  EXPECT_GT(stats.overload, 500);
  EXPECT_GT(stats.instances - stats.overload, 500);
}

// A receiver reuses one result and one scratch for every allocation: nothing
// of an earlier (larger, differently shaped) instance may leak into the next.
TEST(AllocatorPropertyTest, ReusedScratchGivesWhatAFreshAllocationGives) {
  std::mt19937_64 rng(31337);
  Allocation reused;
  AllocationScratch scratch;
  for (int iter = 0; iter < 2000; ++iter) {
    const Instance in = random_instance(rng);
    allocate_into(
        in.flows, in.now,
        {.unscheduled_bps = in.unscheduled_bps, .protect_background = in.protect_background},
        in.config, reused, scratch);
    const Allocation fresh = allocate_instance(in, in.flows);
    ASSERT_EQ(reused.flows.size(), fresh.flows.size()) << "instance " << iter;
    ASSERT_EQ(reused.budget_bps, fresh.budget_bps);
    ASSERT_EQ(reused.urgent_feasible, fresh.urgent_feasible);
    ASSERT_EQ(reused.background_floor_bps, fresh.background_floor_bps);
    ASSERT_EQ(reused.overdue, fresh.overdue);
    for (std::size_t i = 0; i < fresh.flows.size(); ++i) {
      ASSERT_EQ(reused.flows[i].id, fresh.flows[i].id);
      ASSERT_EQ(reused.flows[i].rate_bps, fresh.flows[i].rate_bps) << "instance " << iter;
      ASSERT_EQ(reused.flows[i].urgent_rank, fresh.flows[i].urgent_rank);
      ASSERT_EQ(reused.flows[i].urgent, fresh.flows[i].urgent);
      ASSERT_EQ(reused.flows[i].demand.rate_bps, fresh.flows[i].demand.rate_bps);
    }
  }
}

// Urgent service order: ranks follow (criticality desc, timestamp asc, id).
TEST(AllocatorPropertyTest, UrgentRanksFollowServiceOrder) {
  std::mt19937_64 rng(77);
  int urgent_first_checked = 0;
  for (int iter = 0; iter < 1000; ++iter) {
    const Instance in = random_instance(rng);
    const Allocation a = allocate_instance(in, in.flows);
    std::vector<std::size_t> order;
    for (std::size_t i = 0; i < in.flows.size(); ++i) {
      if (in.flows[i].urgent() && in.flows[i].remaining_bytes > 0) order.push_back(i);
    }
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return serves_before(in.flows[x], in.flows[y]);
    });
    for (std::size_t r = 0; r < order.size(); ++r) {
      ASSERT_EQ(a.flows[order[r]].urgent_rank, r);
    }
    // Floors go out in service order: once one urgent flow is short of its
    // demand, every flow before it got its full demand and the whole budget
    // is in use.
    bool short_seen = false;
    for (const std::size_t i : order) {
      const FlowAllocation& fa = a.flows[i];
      if (fa.rate_bps < fa.demand.rate_bps * (1 - 1e-12)) {
        short_seen = true;
        break;
      }
    }
    if (short_seen) {
      ASSERT_GE(a.total_bps(), a.budget_bps * (1 - 1e-9)) << "instance " << iter;
    }
    // urgent_first is strict priority: after the first urgent flow below its
    // cap, later urgent flows get nothing, except members of its group (same
    // consumer and timestamp), which share with it.
    if (in.config.urgent_first) {
      ++urgent_first_checked;
      const SemanticFlow* below_cap = nullptr;
      for (const std::size_t i : order) {
        const SemanticFlow& f = in.flows[i];
        if (below_cap != nullptr) {
          const bool same_group = f.dependency != 0 && f.dependency == below_cap->dependency &&
                                  f.no_bubble_ps == below_cap->no_bubble_ps &&
                                  f.criticality == below_cap->criticality;
          if (!same_group) {
            ASSERT_LT(a.flows[i].rate_bps, 1e-3) << "instance " << iter;
          }
        } else if (a.flows[i].rate_bps < cap_of(f, in.config) * (1 - 1e-9)) {
          below_cap = &f;
        }
      }
    }
  }
  EXPECT_GT(urgent_first_checked, 150);
}

// (e) Background floor over random sets: background gets > 0, indeed at
// least its floor (or all its senders can take), whenever a floor is due.
TEST(AllocatorPropertyTest, BackgroundFlowsKeepTheirFloor) {
  std::mt19937_64 rng(20240611);
  for (int iter = 0; iter < 5000; ++iter) {
    const Instance in = random_instance(rng);
    const AllocatorConfig& c = in.config;
    const Allocation a = allocate_instance(in, in.flows);
    double background_total = 0, background_caps = 0;
    bool any_background = false;
    for (std::size_t i = 0; i < in.flows.size(); ++i) {
      if (in.flows[i].urgent() || in.flows[i].remaining_bytes == 0) continue;
      any_background = true;
      background_total += a.flows[i].rate_bps;
      background_caps += cap_of(in.flows[i], c);
    }
    // The floor is only promised when the urgent set is feasible or the
    // caller protects background.
    if (!any_background || a.budget_bps <= 0) continue;
    if (!a.urgent_feasible && !in.protect_background) continue;
    ASSERT_GT(background_total, 0.0) << "instance " << iter;
    ASSERT_GE(background_total, std::min(a.background_floor_bps, background_caps) * (1 - 1e-9))
        << "instance " << iter;
  }
}

// ---------------------------------------------------------------------------
// Fluid simulation: allocate every dt (or at the next completion or arrival),
// drain each flow by rate * dt.

struct FluidFlow {
  SemanticFlow flow;
  TimePs arrival = 0;
};

struct FluidResult {
  std::vector<TimePs> finish;  // kTimeNever: not finished by the limit
  std::uint64_t steps = 0;
};

FluidResult run_fluid(const std::vector<FluidFlow>& in, TimePs start, const AllocatorConfig& c,
                      TimePs dt, TimePs limit) {
  const std::size_t n = in.size();
  std::vector<double> rem(n);
  FluidResult result;
  result.finish.assign(n, kTimeNever);
  for (std::size_t i = 0; i < n; ++i) rem[i] = static_cast<double>(in[i].flow.remaining_bytes);
  std::vector<SemanticFlow> cur;
  std::vector<std::size_t> idx;
  TimePs t = start;
  while (t < limit) {
    cur.clear();
    idx.clear();
    TimePs next_arrival = kTimeNever;
    for (std::size_t i = 0; i < n; ++i) {
      if (result.finish[i] != kTimeNever) continue;
      if (in[i].arrival > t) {
        next_arrival = std::min(next_arrival, in[i].arrival);
        continue;
      }
      if (rem[i] <= 0) {
        result.finish[i] = std::max(t, in[i].arrival);
        continue;
      }
      SemanticFlow f = in[i].flow;
      f.remaining_bytes = static_cast<std::uint64_t>(std::ceil(rem[i]));
      cur.push_back(f);
      idx.push_back(i);
    }
    if (cur.empty()) {
      if (next_arrival == kTimeNever) break;
      t = next_arrival;
      continue;
    }
    const Allocation a = allocate(cur, t, 0.0, c);
    ++result.steps;
    TimePs step = std::min(dt, next_arrival - t);
    for (std::size_t k = 0; k < cur.size(); ++k) {
      const double r = a.flows[k].rate_bps;
      if (r <= 0) continue;
      const double tc = std::ceil(rem[idx[k]] * 8.0 / r * static_cast<double>(kPsPerSec));
      step = std::min(step, std::max<TimePs>(1, static_cast<TimePs>(tc)));
    }
    for (std::size_t k = 0; k < cur.size(); ++k) {
      const double r = a.flows[k].rate_bps;
      if (r <= 0) continue;
      const std::size_t i = idx[k];
      rem[i] -= r * static_cast<double>(step) / 8.0 / static_cast<double>(kPsPerSec);
      if (rem[i] <= 1e-6) {
        rem[i] = 0;
        result.finish[i] = t + step;
      }
    }
    t += step;
  }
  return result;
}

double total_bits(const std::vector<FluidFlow>& flows) {
  double bits = 0;
  for (const FluidFlow& f : flows) bits += static_cast<double>(f.flow.remaining_bytes) * 8.0;
  return bits;
}

// Bits over the window (less headroom) of each service-order prefix: the
// least capacity at which the urgent set is feasible in that order.
double required_capacity(const std::vector<FluidFlow>& flows, TimePs now, TimePs headroom) {
  std::vector<const SemanticFlow*> order;
  for (const FluidFlow& f : flows) {
    if (f.flow.urgent()) order.push_back(&f.flow);
  }
  std::sort(order.begin(), order.end(),
            [](const SemanticFlow* a, const SemanticFlow* b) { return serves_before(*a, *b); });
  double bits = 0, need = 0;
  for (const SemanticFlow* f : order) {
    bits += static_cast<double>(f->remaining_bytes) * 8.0;
    need = std::max(need, bits / (static_cast<double>(f->no_bubble_ps - now - headroom) /
                                  static_cast<double>(kPsPerSec)));
  }
  return need;
}

std::vector<SemanticFlow> flows_of(const std::vector<FluidFlow>& in) {
  std::vector<SemanticFlow> out;
  for (const FluidFlow& f : in) out.push_back(f.flow);
  return out;
}

// A random urgent set of n flows due within [0.1, 10] ms. Two shapes, half
// each: "scaled" (random sizes, all scaled by one factor so the tightest
// prefix needs `load` x capacity) and "tight" (each flow's bytes fill the gap
// since the previous deadline to between 60% and 100% of `load` x capacity,
// so the EDF schedule is nearly busy all the way).
std::vector<FluidFlow> random_urgent_set(std::mt19937_64& rng, int n, TimePs now, TimePs headroom,
                                         double capacity, double load, bool mixed_criticality,
                                         FlowId& id) {
  std::vector<TimePs> deadlines;
  for (int k = 0; k < n; ++k) {
    deadlines.push_back(now +
                        static_cast<TimePs>(log_uniform(rng, 0.1, 10) * static_cast<double>(kMs)));
  }
  std::sort(deadlines.begin(), deadlines.end());
  const bool tight = chance(rng, 0.5);
  std::vector<FluidFlow> flows;
  TimePs prev = now;
  for (const TimePs d : deadlines) {
    const double gap_s = static_cast<double>(d - headroom - prev) / static_cast<double>(kPsPerSec);
    const double bytes =
        tight ? load * uniform(rng, 0.6, 1.0) * capacity * gap_s / 8.0 : log_uniform(rng, 1e3, 1e8);
    prev = d - headroom;
    flows.push_back({urgent(id++, std::max<std::uint64_t>(1, static_cast<std::uint64_t>(bytes)), d,
                            mixed_criticality ? static_cast<std::uint32_t>(rng() % 2) : 0),
                     now});
  }
  // Scaled, or tight but in a criticality order that no longer fits: scale.
  const double need = required_capacity(flows, now, headroom);
  if (!tight || need > load * capacity) {
    const double scale = load * capacity / need;
    for (FluidFlow& f : flows) {
      f.flow.remaining_bytes = std::max<std::uint64_t>(
          1, static_cast<std::uint64_t>(static_cast<double>(f.flow.remaining_bytes) * scale));
    }
  }
  for (FluidFlow& f : flows) f.flow.size_bytes = f.flow.remaining_bytes;
  std::shuffle(flows.begin(), flows.end(), rng);
  return flows;
}

// Random urgent sets (plus a few background flows) that EDF finishes on
// time at 95% of the urgent budget: every urgent flow lands by its
// timestamp, and everything finishes as soon as the budget allows.
TEST(AllocatorFluidTest, EdfFeasibleSetsFinishOnTime) {
  std::mt19937_64 rng(0xfeed);
  const TimePs dt = 10 * kUs;
  double worst_early_ps = -1e300;  // max over urgent flows of finish - (t_nb - headroom)
  int instances = 0;
  for (int iter = 0; iter < 300; ++iter) {
    AllocatorConfig c;
    c.background = chance(rng, 0.5) ? BackgroundPolicy::kMaxMinFair
                                    : BackgroundPolicy::kShortestRemainingFirst;
    c.urgent_first = chance(rng, 0.3);
    c.slack_adaptive = !c.urgent_first && iter % 3 == 0;
    const TimePs now = 2 * kMs + static_cast<TimePs>(rng() % kMs);
    const double budget = c.usable_fraction * c.link_bps;
    const int n_urgent = 1 + static_cast<int>(rng() % 12);
    const int n_background = chance(rng, 0.25) ? 0 : 1 + static_cast<int>(rng() % 3);
    const double floor = n_background > 0 ? c.background_floor_fraction * budget : 0.0;
    const double capacity = 0.95 * (budget - floor);
    const bool mixed_criticality = chance(rng, 0.5);

    FlowId id = 1;
    std::vector<FluidFlow> flows =
        random_urgent_set(rng, n_urgent, now, c.demand.headroom_ps, capacity,
                          uniform(rng, 0.3, 1.0), mixed_criticality, id);
    ASSERT_TRUE(edf_feasible(flows_of(flows), now, capacity, c.demand.headroom_ps))
        << "instance " << iter;
    for (int k = 0; k < n_background; ++k) {
      flows.push_back(
          {background(id++, static_cast<std::uint64_t>(log_uniform(rng, 1e4, 1e8))), now});
    }
    std::shuffle(flows.begin(), flows.end(), rng);

    const FluidResult r = run_fluid(flows, now, c, dt, now + kSecond);
    ++instances;
    TimePs last = now;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      const SemanticFlow& f = flows[i].flow;
      ASSERT_NE(r.finish[i], kTimeNever)
          << "instance " << iter << " flow " << f.id << " never finished";
      last = std::max(last, r.finish[i]);
      if (!f.urgent()) continue;
      EXPECT_LE(r.finish[i], f.no_bubble_ps + dt + c.demand.headroom_ps)
          << "instance " << iter << " flow " << f.id << " late by "
          << static_cast<double>(r.finish[i] - f.no_bubble_ps) / kUs << " us";
      worst_early_ps =
          std::max(worst_early_ps,
                   static_cast<double>(r.finish[i] - (f.no_bubble_ps - c.demand.headroom_ps)));
    }
    // Work conserving (uncapped senders): done when the budget has moved all the bits.
    const double makespan_ps = total_bits(flows) / budget * static_cast<double>(kPsPerSec);
    EXPECT_LE(static_cast<double>(last - now), makespan_ps * (1 + 1e-9) + 100.0)
        << "instance " << iter;
  }
  EXPECT_EQ(instances, 300);
  // In fact every urgent flow lands by its timestamp less the headroom.
  EXPECT_LE(worst_early_ps, 0.0);
}

// EDF on one machine at the full budget: lateness_k = sum_{j<=k} bits_j /
// budget - (d_k - now), in deadline order.
double edf_max_lateness_ps(const std::vector<FluidFlow>& flows, TimePs now, double budget) {
  std::vector<const SemanticFlow*> order;
  for (const FluidFlow& f : flows) order.push_back(&f.flow);
  std::sort(order.begin(), order.end(), [](const SemanticFlow* a, const SemanticFlow* b) {
    return a->no_bubble_ps < b->no_bubble_ps ||
           (a->no_bubble_ps == b->no_bubble_ps && a->id < b->id);
  });
  double bits = 0, worst = -1e300;
  for (const SemanticFlow* f : order) {
    bits += static_cast<double>(f->remaining_bytes) * 8.0;
    worst = std::max(worst, bits / budget * static_cast<double>(kPsPerSec) -
                                static_cast<double>(f->no_bubble_ps - now));
  }
  return worst;
}

// Overloaded urgent sets: the largest lateness is within 10% (plus one dt)
// of EDF's at the full budget, and no better than EDF's (EDF is optimal).
// Under overload the allocator's budget is overload_usable_fraction of the
// link, so that is the rate EDF gets.
TEST(AllocatorFluidTest, OverloadLatenessCloseToEdf) {
  std::mt19937_64 rng(0xbad10ad);
  const TimePs dt = 10 * kUs;
  AllocatorConfig c;
  const double budget = c.usable_fraction * c.link_bps;
  const double full = c.overload_usable_fraction * c.link_bps;
  int overloaded = 0;
  for (int iter = 0; iter < 300; ++iter) {
    c.urgent_first = chance(rng, 0.3);
    c.slack_adaptive = !c.urgent_first && iter % 3 == 0;
    const TimePs now = kMs + static_cast<TimePs>(rng() % kMs);
    const int n = 2 + static_cast<int>(rng() % 11);
    FlowId id = 1;
    const std::vector<FluidFlow> flows =
        random_urgent_set(rng, n, now, 0, budget, uniform(rng, 1.1, 2.5), false, id);
    if (edf_feasible(flows_of(flows), now, budget, 0)) continue;  // a tight set may still fit
    ++overloaded;
    const FluidResult r = run_fluid(flows, now, c, dt, now + kSecond);
    double worst = -1e300;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      ASSERT_NE(r.finish[i], kTimeNever);
      worst = std::max(worst, static_cast<double>(r.finish[i] - flows[i].flow.no_bubble_ps));
    }
    const double edf = edf_max_lateness_ps(flows, now, full);
    EXPECT_LE(worst, edf + 0.1 * std::abs(edf) + static_cast<double>(dt)) << "instance " << iter;
    EXPECT_GE(worst, edf - static_cast<double>(dt)) << "instance " << iter;
  }
  EXPECT_GT(overloaded, 200);
}

// Under overload the critical flow finishes first even with the later timestamp.
TEST(AllocatorFluidTest, CriticalFlowFinishesFirstUnderOverload) {
  const AllocatorConfig c;
  const TimePs now = kMs;
  const std::vector<FluidFlow> flows = {
      {urgent(1, 5'000'000, now + c.demand.headroom_ps + kMs / 2, 0), now},
      {urgent(2, 10'000'000, now + c.demand.headroom_ps + kMs, 1), now}};
  const FluidResult r = run_fluid(flows, now, c, 10 * kUs, now + kSecond);
  ASSERT_NE(r.finish[0], kTimeNever);
  ASSERT_NE(r.finish[1], kTimeNever);
  EXPECT_LT(r.finish[1], r.finish[0]);
  EXPECT_LE(r.finish[1], flows[1].flow.no_bubble_ps);  // the critical one is on time
  EXPECT_GT(r.finish[0], flows[0].flow.no_bubble_ps);  // the other one pays
}

// Repeated rounds of urgent arrivals (some rounds overloaded) alongside
// background flows: every flow eventually completes, and by the time a
// work-conserving link would have moved all the bits.
TEST(AllocatorFluidTest, NoStarvationOverRepeatedRounds) {
  std::mt19937_64 rng(0x5747);
  const TimePs dt = 10 * kUs;
  for (int iter = 0; iter < 40; ++iter) {
    AllocatorConfig c;
    c.background = chance(rng, 0.5) ? BackgroundPolicy::kMaxMinFair
                                    : BackgroundPolicy::kShortestRemainingFirst;
    const double budget = c.usable_fraction * c.link_bps;
    const TimePs start = kMs;
    const TimePs round = 200 * kUs;
    std::vector<FluidFlow> flows;
    FlowId id = 1;
    TimePs last_arrival = start;
    for (int k = 0; k < 3; ++k) {
      flows.push_back(
          {background(id++, static_cast<std::uint64_t>(log_uniform(rng, 1e5, 5e6))), start});
    }
    for (int r = 0; r < 25; ++r) {
      const TimePs at = start + r * round;
      last_arrival = at;
      if (r % 5 == 4) {
        flows.push_back(
            {background(id++, static_cast<std::uint64_t>(log_uniform(rng, 1e5, 5e6))), at});
      }
      const int n = static_cast<int>(rng() % 4);
      const double load = uniform(rng, 0.2, 1.4);  // of one round at the budget
      for (int k = 0; k < n; ++k) {
        const auto bytes = static_cast<std::uint64_t>(
            load * budget / 8.0 * static_cast<double>(round) / static_cast<double>(kPsPerSec) / n);
        flows.push_back(
            {urgent(id++, std::max<std::uint64_t>(1, bytes),
                    at + static_cast<TimePs>(uniform(rng, 0.2, 2.0) * static_cast<double>(kMs)),
                    static_cast<std::uint32_t>(rng() % 2)),
             at});
      }
    }
    const FluidResult res = run_fluid(flows, start, c, dt, start + kSecond);
    const double bound_ps = static_cast<double>(last_arrival) +
                            total_bits(flows) / budget * static_cast<double>(kPsPerSec) + 100.0;
    for (std::size_t i = 0; i < flows.size(); ++i) {
      ASSERT_NE(res.finish[i], kTimeNever) << "instance " << iter << " flow " << flows[i].flow.id;
      EXPECT_LE(static_cast<double>(res.finish[i]), bound_ps)
          << "instance " << iter << " flow " << flows[i].flow.id;
    }
  }
}

// A background flow keeps moving while a stream of urgent work keeps the
// link overloaded: with protect_background (allocate's default) its floor
// (1% of the budget) moves 125 kB in about 1 ms, instead of waiting ~30 ms
// for the urgent backlog to drain.
TEST(AllocatorFluidTest, BackgroundNotStarvedBySustainedOverload) {
  const AllocatorConfig c;
  const double budget = c.usable_fraction * c.link_bps;
  const TimePs start = kMs;
  const TimePs period = 100 * kUs;
  const TimePs stream_end = start + 20 * kMs;
  // The background flow arrives once the overload is established.
  const TimePs bg_arrival = start + 2 * kMs;
  std::vector<FluidFlow> flows = {{background(1, 125'000), bg_arrival}};
  FlowId id = 2;
  for (TimePs at = start; at < stream_end; at += period) {
    // 150% of the budget, due 300 us after it arrives.
    const auto bytes = static_cast<std::uint64_t>(1.5 * budget / 8.0 * static_cast<double>(period) /
                                                  static_cast<double>(kPsPerSec));
    flows.push_back({urgent(id++, bytes, at + 300 * kUs), at});
  }
  const FluidResult r = run_fluid(flows, start, c, 10 * kUs, start + kSecond);
  ASSERT_NE(r.finish[0], kTimeNever);
  // 1e6 bit at the 1 Gbit/s floor is 1 ms; allow 3 ms.
  EXPECT_LE(r.finish[0], bg_arrival + 3 * kMs)
      << "finished " << static_cast<double>(r.finish[0] - bg_arrival) / kMs
      << " ms after arriving; the urgent stream ends 18 ms after it arrives";
}

}  // namespace
}  // namespace safs::core

namespace safs::core {
namespace {

// The 16 dispatches into one FFN op: same consumer, same timestamp, already
// overdue. Serving them one at a time would finish the group no sooner and
// hand the link over 15 times; they share it in proportion to their bytes.
TEST(Allocator, AGroupFeedingOneConsumerSharesTheLink) {
  AllocatorConfig config;
  std::vector<SemanticFlow> flows;
  for (int i = 0; i < 16; ++i) {
    SemanticFlow f;
    f.id = static_cast<FlowId>(i + 1);
    f.urgency = Urgency::kUrgent;
    f.no_bubble_ps = 5 * kPsPerUs;
    f.dependency = 42;
    f.remaining_bytes = i < 8 ? 57'344 : 2 * 57'344;
    flows.push_back(f);
  }
  const Allocation a = allocate(flows, 10 * kPsPerUs, 0, config);
  double total = 0;
  for (std::size_t i = 0; i < flows.size(); ++i) {
    total += a.flows[i].rate_bps;
    // Twice the bytes, twice the rate: every member finishes at the same time.
    const double expected = (i < 8 ? 1.0 : 2.0) * a.flows[0].rate_bps;
    EXPECT_NEAR(a.flows[i].rate_bps, expected, 1e-6 * expected);
  }
  EXPECT_NEAR(total, a.budget_bps, 1e-6 * a.budget_bps);
  // Different consumers keep EDF's strict order.
  flows[15].dependency = 43;
  flows[15].no_bubble_ps = 4 * kPsPerUs;  // earlier: served first, alone
  const Allocation b = allocate(flows, 10 * kPsPerUs, 0, config);
  EXPECT_NEAR(b.flows[15].rate_bps, config.link_bps, 1e-6 * config.link_bps);
}

}  // namespace
}  // namespace safs::core
