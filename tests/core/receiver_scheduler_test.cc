// ReceiverScheduler: grants after flows come and go, no re-sending without
// change, runtime updates (timestamps, sender caps, unscheduled bytes) and
// when to poll next.
#include "core/receiver_scheduler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "core/grant.h"
#include "core/semantic_flow.h"
#include "core/types.h"

namespace safs::core {
namespace {

constexpr TimePs kUs = kPsPerUs;
constexpr TimePs kMs = 1000 * kPsPerUs;
constexpr double kGbps = 1e9;

SemanticFlow urgent(FlowId id, std::uint64_t bytes, TimePs no_bubble) {
  SemanticFlow f;
  f.id = id;
  f.size_bytes = bytes;
  f.remaining_bytes = bytes;
  f.no_bubble_ps = no_bubble;
  f.urgency = Urgency::kUrgent;
  return f;
}

SemanticFlow background(FlowId id, std::uint64_t bytes) {
  SemanticFlow f;
  f.id = id;
  f.size_bytes = bytes;
  f.remaining_bytes = bytes;
  f.urgency = Urgency::kBackground;
  return f;
}

const Grant* find_grant(const std::vector<Grant>& grants, FlowId flow) {
  for (const Grant& g : grants) {
    if (g.flow == flow) return &g;
  }
  return nullptr;
}

double rate_of(const ReceiverScheduler& rs, FlowId id) {
  for (const FlowAllocation& a : rs.allocation().flows) {
    if (a.id == id) return a.rate_bps;
  }
  ADD_FAILURE() << "no allocation for flow " << id;
  return -1;
}

// One urgent flow (4 MB, 1 ms after the headroom: 35.2 Gbit/s) and one
// background flow (the rest of the 97 Gbit/s budget), polled at t0.
struct Fixture {
  static constexpr TimePs kT0 = 5 * kMs;
  ReceiverConfig config;
  ReceiverScheduler rs{config};
  std::vector<Grant> first;

  Fixture() {
    rs.add_flow(urgent(1, 4'000'000, kT0 + config.allocator.demand.headroom_ps + kMs));
    rs.add_flow(background(2, 50'000'000));
    first = rs.poll(kT0);
  }
};

TEST(ReceiverSchedulerTest, PollAfterAddFlowReturnsGrants) {
  ReceiverConfig config;
  ReceiverScheduler rs(config);
  EXPECT_EQ(rs.next_poll_ps(), kTimeNever);
  EXPECT_TRUE(rs.poll(0).empty());
  rs.add_flow(urgent(1, 4'000'000, Fixture::kT0 + config.allocator.demand.headroom_ps + kMs));
  rs.add_flow(background(2, 50'000'000));
  EXPECT_TRUE(rs.knows(1));
  EXPECT_FALSE(rs.knows(3));
  EXPECT_EQ(rs.next_poll_ps(), 0);  // dirty

  const std::vector<Grant> grants = rs.poll(Fixture::kT0);
  ASSERT_EQ(grants.size(), 2u);
  const Grant* u = find_grant(grants, 1);
  const Grant* b = find_grant(grants, 2);
  ASSERT_NE(u, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_NEAR(u->rate_bps, 35.2 * kGbps, 1.0);
  EXPECT_NEAR(b->rate_bps, (97 - 35.2) * kGbps, 1.0);
  EXPECT_EQ(u->priority, 5);  // urgent rank 0
  EXPECT_EQ(b->priority, 1);  // background
  EXPECT_EQ(u->epoch, 1u);
  EXPECT_EQ(rs.reallocations(), 1u);
  EXPECT_EQ(rs.grants_issued(), 2u);
  EXPECT_NEAR(rs.allocation().budget_bps, 97 * kGbps, 1.0);
  EXPECT_EQ(rs.next_poll_ps(), Fixture::kT0 + config.reallocate_every_ps);
}

// Background the receiver does not grant keeps the urgent flow at its
// no-bubble rate while its packets arrive, and re-plans at once when the
// first arrives; once none has arrived for unscheduled_window_ps, the next
// reallocation tops the urgent flow up again.
TEST(ReceiverSchedulerTest, UngrantedBackgroundKeepsTheLeftoverFree) {
  ReceiverConfig config;
  ReceiverScheduler rs(config);
  const TimePs t0 = Fixture::kT0;
  rs.add_flow(urgent(1, 4'000'000, t0 + config.allocator.demand.headroom_ps + kMs));
  rs.poll(t0);
  EXPECT_NEAR(rate_of(rs, 1), 97 * kGbps, 1.0);  // alone: the whole budget
  rs.note_ungranted_background(t0 + kUs);
  EXPECT_TRUE(rs.has_changes());
  rs.poll(t0 + kUs);
  EXPECT_NEAR(rate_of(rs, 1), 35.2 * kGbps, 0.1 * kGbps);  // its demand only
  rs.note_ungranted_background(t0 + 2 * kUs);
  EXPECT_FALSE(rs.has_changes());  // still arriving: nothing to re-plan
  const TimePs quiet = t0 + 2 * kUs + config.unscheduled_window_ps;
  rs.poll(quiet);  // stale by then: the periodic reallocation
  EXPECT_NEAR(rate_of(rs, 1), 97 * kGbps, 1.0);
}

TEST(ReceiverSchedulerTest, NothingResentWithoutChange) {
  Fixture f;
  ASSERT_EQ(f.first.size(), 2u);
  EXPECT_TRUE(f.rs.poll(Fixture::kT0 + 10 * kUs).empty());
  EXPECT_EQ(f.rs.reallocations(), 1u);  // not yet stale
  // Stale: reallocates, but the urgent demand only drifted by 2%: no grant.
  EXPECT_TRUE(f.rs.poll(Fixture::kT0 + 20 * kUs).empty());
  EXPECT_EQ(f.rs.reallocations(), 2u);
  EXPECT_EQ(f.rs.grants_issued(), 2u);
  EXPECT_EQ(f.rs.next_poll_ps(), Fixture::kT0 + 40 * kUs);

  // Bytes arriving do not trigger a reallocation by themselves...
  f.rs.update_remaining(1, 1'000'000);
  EXPECT_EQ(f.rs.next_poll_ps(), Fixture::kT0 + 40 * kUs);
  EXPECT_TRUE(f.rs.poll(Fixture::kT0 + 30 * kUs).empty());
  EXPECT_EQ(f.rs.reallocations(), 2u);
  // ...but the next periodic reallocation sees them: 1 MB in 960 us.
  const std::vector<Grant> g = f.rs.poll(Fixture::kT0 + 40 * kUs);
  EXPECT_EQ(f.rs.reallocations(), 3u);
  ASSERT_EQ(g.size(), 1u);  // the decrease; the background increase waits
  EXPECT_EQ(g[0].flow, 1u);
  EXPECT_NEAR(g[0].rate_bps, 1.1 * 8e6 / 960e-6, 1e3);
  const TimePs release = Fixture::kT0 + 40 * kUs + f.config.grants.control_delay_ps;
  EXPECT_EQ(f.rs.next_poll_ps(), release);
  EXPECT_TRUE(f.rs.poll(release - 1).empty());
  const std::vector<Grant> later = f.rs.poll(release);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].flow, 2u);
  EXPECT_NEAR(later[0].rate_bps, 97 * kGbps - g[0].rate_bps, 1.0);
}

TEST(ReceiverSchedulerTest, LaterTimestampFreesCapacityForBackground) {
  Fixture f;
  const double urgent_before = rate_of(f.rs, 1);
  const double background_before = rate_of(f.rs, 2);
  const TimePs t = Fixture::kT0 + kUs;
  EXPECT_TRUE(f.rs.update_no_bubble(1, t + f.config.allocator.demand.headroom_ps + 2 * kMs));
  EXPECT_EQ(f.rs.next_poll_ps(), 0);
  const std::vector<Grant> g = f.rs.poll(t);
  EXPECT_LT(rate_of(f.rs, 1), urgent_before);
  EXPECT_NEAR(rate_of(f.rs, 1), 17.6 * kGbps, 1.0);
  EXPECT_GT(rate_of(f.rs, 2), background_before);
  EXPECT_NEAR(rate_of(f.rs, 1) + rate_of(f.rs, 2), 97 * kGbps, 1.0);
  // The decrease goes out now, the background increase after a control delay.
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].flow, 1u);
  const std::vector<Grant> later = f.rs.poll(t + f.config.grants.control_delay_ps);
  ASSERT_NE(find_grant(later, 2), nullptr);
  EXPECT_NEAR(find_grant(later, 2)->rate_bps, rate_of(f.rs, 2), 1e-6);
}

TEST(ReceiverSchedulerTest, EarlierTimestampRaisesUrgentRate) {
  Fixture f;
  const double urgent_before = rate_of(f.rs, 1);
  const TimePs t = Fixture::kT0 + kUs;
  ASSERT_TRUE(f.rs.update_no_bubble(1, t + f.config.allocator.demand.headroom_ps + kMs / 2));
  const std::vector<Grant> g = f.rs.poll(t);
  EXPECT_GT(rate_of(f.rs, 1), urgent_before);
  EXPECT_NEAR(rate_of(f.rs, 1), 70.4 * kGbps, 1.0);
  EXPECT_NEAR(rate_of(f.rs, 2), (97 - 70.4) * kGbps, 1.0);
  // Background decreases at once; the urgent increase follows.
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].flow, 2u);
  const std::vector<Grant> later = f.rs.poll(t + f.config.grants.control_delay_ps);
  ASSERT_NE(find_grant(later, 1), nullptr);
  EXPECT_NEAR(find_grant(later, 1)->rate_bps, 70.4 * kGbps, 1.0);
}

TEST(ReceiverSchedulerTest, UnknownOrUnchangedTimestamp) {
  Fixture f;
  EXPECT_FALSE(f.rs.update_no_bubble(42, kMs));
  EXPECT_NE(f.rs.next_poll_ps(), 0);
  // The same timestamp again is not a change.
  EXPECT_TRUE(f.rs.update_no_bubble(1, f.rs.flows()[0].no_bubble_ps));
  EXPECT_NE(f.rs.next_poll_ps(), 0);
}

TEST(ReceiverSchedulerTest, SenderCapLimitsFlowAndFreesTheRest) {
  ReceiverConfig config;
  ReceiverScheduler rs(config);
  rs.add_flow(background(1, 50'000'000));
  rs.add_flow(background(2, 50'000'000));
  ASSERT_EQ(rs.poll(0).size(), 2u);
  EXPECT_NEAR(rate_of(rs, 1), 48.5 * kGbps, 1.0);
  EXPECT_NEAR(rate_of(rs, 2), 48.5 * kGbps, 1.0);

  rs.set_sender_cap(1, 10 * kGbps);
  EXPECT_EQ(rs.next_poll_ps(), 0);
  const std::vector<Grant> g = rs.poll(kUs);
  EXPECT_NEAR(rate_of(rs, 1), 10 * kGbps, 1.0);
  EXPECT_NEAR(rate_of(rs, 2), 87 * kGbps, 1.0);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].flow, 1u);
  EXPECT_NEAR(g[0].rate_bps, 10 * kGbps, 1.0);
  const std::vector<Grant> later = rs.poll(kUs + config.grants.control_delay_ps);
  ASSERT_NE(find_grant(later, 2), nullptr);
  EXPECT_NEAR(find_grant(later, 2)->rate_bps, 87 * kGbps, 1.0);

  // The same cap again is no change; unknown flows are ignored.
  rs.set_sender_cap(1, 10 * kGbps);
  rs.set_sender_cap(77, 1 * kGbps);
  EXPECT_NE(rs.next_poll_ps(), 0);
}

TEST(ReceiverSchedulerTest, UnscheduledBytesReduceBudgetAndDecay) {
  ReceiverConfig config;  // tau 100 us
  ReceiverScheduler rs(config);
  rs.add_flow(background(1, 500'000'000));
  ASSERT_EQ(rs.poll(0).size(), 1u);
  EXPECT_NEAR(rs.allocation().budget_bps, 97 * kGbps, 1.0);
  EXPECT_EQ(rs.unscheduled_bps(0), 0.0);

  // 125 kB = 1e6 bit over tau = 100 us: 10 Gbit/s.
  const TimePs t = 100 * kUs;
  rs.note_unscheduled(125'000, t);
  EXPECT_NEAR(rs.unscheduled_bps(t), 10 * kGbps, 1e-3);
  EXPECT_NEAR(rs.unscheduled_bps(t + 100 * kUs), 10 * kGbps * std::exp(-1.0), 1e-3);
  // More bytes add to what is left of the estimate.
  rs.note_unscheduled(125'000, t + 100 * kUs);
  EXPECT_NEAR(rs.unscheduled_bps(t + 100 * kUs), 10 * kGbps * (1 + std::exp(-1.0)), 1e-3);

  // The next reallocation reserves it.
  const TimePs t1 = t + 100 * kUs;
  rs.poll(t1);
  const double reserved = 10 * kGbps * (1 + std::exp(-1.0));
  EXPECT_NEAR(rs.allocation().budget_bps, 97 * kGbps - reserved, 1e3);
  EXPECT_NEAR(rate_of(rs, 1), 97 * kGbps - reserved, 1e3);

  // And gives it back as the estimate decays.
  double last_budget = rs.allocation().budget_bps;
  for (TimePs at = t1 + 20 * kUs; at <= t1 + 2 * kMs; at += 20 * kUs) {
    rs.update_remaining(1, 500'000'000);  // the flow is served: its lease stays alive
    rs.poll(at);
    EXPECT_GT(rs.allocation().budget_bps, last_budget) << at;
    EXPECT_NEAR(rs.allocation().budget_bps, 97 * kGbps - rs.unscheduled_bps(at), 1e-3);
    last_budget = rs.allocation().budget_bps;
  }
  EXPECT_NEAR(last_budget, 97 * kGbps, 97 * kGbps * 1e-6);
}

// Blind background sits below granted urgent data in the switches: with
// urgent_over_blind_background the urgent flows' budget holds no room for
// it (only for blind urgent bytes), and background's share still does.
TEST(ReceiverSchedulerTest, BlindBackgroundIsHeldOutOfBackgroundsShareOnly) {
  // 10 Gbit/s of blind background and 2 Gbit/s of blind urgent arrivals,
  // an urgent flow of 2 MB due `after_headroom` after the headroom, and a
  // background flow.
  const auto rates = [](bool urgent_over_blind_background, TimePs after_headroom) {
    ReceiverConfig config;  // tau 100 us
    config.urgent_over_blind_background = urgent_over_blind_background;
    ReceiverScheduler rs(config);
    const TimePs t = 10 * kUs;
    rs.note_unscheduled(125'000, t, /*background=*/true);
    rs.note_unscheduled(25'000, t, /*background=*/false);
    rs.add_flow(urgent(1, 2'000'000, t + config.allocator.demand.headroom_ps + after_headroom));
    rs.add_flow(background(2, 500'000'000));
    rs.poll(t);
    return std::make_pair(rate_of(rs, 1), rate_of(rs, 2));
  };
  // Due in 100 us (160 Gbit/s): overload, so the whole link less the blind
  // arrivals held out goes to it (the background floor is given up while
  // background's long-run share is high).
  const auto [urgent_held, background_held] = rates(false, 100 * kUs);
  EXPECT_NEAR(urgent_held, 88 * kGbps, 1e3);  // 100 - 12
  EXPECT_NEAR(background_held, 0.0, 1e3);
  const auto [urgent_over, background_over] = rates(true, 100 * kUs);
  EXPECT_NEAR(urgent_over, 98 * kGbps, 1e3);  // 100 - 2
  EXPECT_NEAR(background_over, 0.0, 1e3);

  // Due in 1 ms (16 Gbit/s, asked with the demand margin of 1.1): it fits
  // either way, gets its no-bubble rate, and background gets the rest of 97
  // less all 12 Gbit/s of blind arrivals in both cases.
  const auto [urgent_fits, background_fits] = rates(false, kMs);
  EXPECT_NEAR(urgent_fits, 17.6 * kGbps, 1e3);
  EXPECT_NEAR(background_fits, (97 - 12 - 17.6) * kGbps, 1e3);
  const auto [urgent_fits_over, background_fits_over] = rates(true, kMs);
  EXPECT_NEAR(urgent_fits_over, urgent_fits, 1e3);
  EXPECT_NEAR(background_fits_over, background_fits, 1e3);
}

TEST(ReceiverSchedulerTest, NextPollIsEarliestOfRefreshReallocationAndRelease) {
  ReceiverConfig config;
  config.reallocate_every_ps = kPsPerSec;  // so the lease refresh comes first
  ReceiverScheduler rs(config);
  EXPECT_EQ(rs.next_poll_ps(), kTimeNever);
  rs.add_flow(background(1, 500'000'000));
  EXPECT_EQ(rs.next_poll_ps(), 0);
  const TimePs t0 = 3 * kUs;
  ASSERT_EQ(rs.poll(t0).size(), 1u);
  const TimePs refresh = t0 + config.grants.validity_ps - config.grants.refresh_margin_ps;
  // Unused, the lease would lapse at its end; used, it is refreshed early.
  EXPECT_EQ(rs.next_poll_ps(), t0 + config.grants.validity_ps);
  rs.update_remaining(1, 400'000'000);
  EXPECT_EQ(rs.next_poll_ps(), refresh);
  EXPECT_TRUE(rs.poll(refresh - 1).empty());
  const std::vector<Grant> r = rs.poll(refresh);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].epoch, 2u);
  EXPECT_EQ(rs.reallocations(), 1u);  // a refresh, not a reallocation
  EXPECT_EQ(rs.next_poll_ps(), refresh + config.grants.validity_ps);  // unused so far

  // A held-back increase comes first of all.
  rs.add_flow(background(2, 500'000'000));
  EXPECT_EQ(rs.next_poll_ps(), 0);
  const TimePs t1 = refresh + 10 * kUs;
  const std::vector<Grant> g = rs.poll(t1);  // flow 1 halves now, flow 2 is new (an increase)
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].flow, 1u);
  EXPECT_EQ(rs.next_poll_ps(), t1 + config.grants.control_delay_ps);

  // With the default period, a reallocation is due before the refresh.
  ReceiverConfig defaults;
  ReceiverScheduler other(defaults);
  other.add_flow(background(1, 500'000'000));
  other.poll(t0);
  EXPECT_EQ(other.next_poll_ps(), t0 + defaults.reallocate_every_ps);

  // No flows and no grants outstanding: nothing to do.
  other.remove_flow(1);
  EXPECT_EQ(other.next_poll_ps(), 0);
  EXPECT_TRUE(other.poll(t0 + kUs).empty());
  EXPECT_EQ(other.next_poll_ps(), kTimeNever);
}

// A receiver whose every sender stalled (a timeout under loss) neither
// refreshes their leases nor reallocates, so it sends nothing and needs no
// poll; the first data back gets its flow a grant at the next poll.
TEST(ReceiverSchedulerTest, StalledFlowsLeaveTheReceiverQuiet) {
  const ReceiverConfig config;
  ReceiverScheduler rs(config);
  for (const FlowId id : {1u, 2u}) rs.add_flow(background(id, 500'000'000));
  ASSERT_EQ(rs.poll(0).size(), 2u);
  const TimePs lease_end = config.grants.validity_ps;
  std::uint64_t grants = 0;
  for (TimePs t = config.reallocate_every_ps; t <= lease_end; t += config.reallocate_every_ps) {
    grants += rs.poll(t).size();
  }
  EXPECT_EQ(grants, 0u);
  EXPECT_EQ(rs.next_poll_ps(), kTimeNever);
  const std::uint64_t reallocations = rs.reallocations();
  EXPECT_TRUE(rs.poll(10 * lease_end).empty());
  EXPECT_EQ(rs.reallocations(), reallocations);

  rs.update_remaining(2, 400'000'000);  // flow 2's sender is back
  EXPECT_TRUE(rs.has_changes());
  const std::vector<Grant> back = rs.poll(10 * lease_end + kUs);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].flow, 2u);
  EXPECT_GT(back[0].rate_bps, 0.0);
  EXPECT_NE(rs.next_poll_ps(), kTimeNever);  // served again: periodic reallocation resumes
}

TEST(ReceiverSchedulerTest, RemoveFlowFreesCapacity) {
  ReceiverConfig config;
  ReceiverScheduler rs(config);
  rs.add_flow(background(1, 50'000'000));
  rs.add_flow(background(2, 50'000'000));
  rs.add_flow(background(3, 50'000'000));
  ASSERT_EQ(rs.poll(0).size(), 3u);
  EXPECT_NEAR(rate_of(rs, 2), 97 * kGbps / 3, 1.0);
  rs.remove_flow(1);
  rs.remove_flow(99);  // unknown: ignored
  EXPECT_FALSE(rs.knows(1));
  EXPECT_EQ(rs.flows().size(), 2u);
  EXPECT_EQ(rs.next_poll_ps(), 0);
  const std::vector<Grant> g = rs.poll(kUs);
  ASSERT_EQ(rs.allocation().flows.size(), 2u);
  EXPECT_NEAR(rate_of(rs, 2), 48.5 * kGbps, 1.0);
  EXPECT_NEAR(rate_of(rs, 3), 48.5 * kGbps, 1.0);
  // Pure increases: out at once.
  ASSERT_EQ(g.size(), 2u);
  EXPECT_NEAR(find_grant(g, 2)->rate_bps, 48.5 * kGbps, 1.0);
  EXPECT_NEAR(find_grant(g, 3)->rate_bps, 48.5 * kGbps, 1.0);
}

TEST(ReceiverSchedulerTest, AddingKnownFlowUpdatesIt) {
  Fixture f;
  SemanticFlow bigger =
      urgent(1, 8'000'000, Fixture::kT0 + f.config.allocator.demand.headroom_ps + kMs);
  f.rs.add_flow(bigger);
  EXPECT_EQ(f.rs.flows().size(), 2u);
  EXPECT_EQ(f.rs.flows()[0].remaining_bytes, 8'000'000u);
  EXPECT_EQ(f.rs.next_poll_ps(), 0);
  f.rs.poll(Fixture::kT0 + 0);
  EXPECT_NEAR(rate_of(f.rs, 1), 70.4 * kGbps, 1.0);  // 1.1 * 6.4e7 bit / 1 ms
}

TEST(ReceiverSchedulerTest, PrioritiesFollowUrgentRank) {
  ReceiverConfig config;
  ReceiverScheduler rs(config);
  const TimePs t = kMs;
  for (FlowId id = 1; id <= 4; ++id) {
    rs.add_flow(urgent(id, 100'000, t + static_cast<TimePs>(id) * kMs));  // rank id - 1
  }
  rs.add_flow(background(5, 1'000'000));
  const std::vector<Grant> g = rs.poll(t);
  ASSERT_EQ(g.size(), 5u);
  EXPECT_EQ(find_grant(g, 1)->priority, 5);
  EXPECT_EQ(find_grant(g, 2)->priority, 4);
  EXPECT_EQ(find_grant(g, 3)->priority, 3);
  EXPECT_EQ(find_grant(g, 4)->priority, 3);
  EXPECT_EQ(find_grant(g, 5)->priority, 1);
  // Flow 1 leaves: everyone moves up a rank, and the priority change is re-sent.
  rs.remove_flow(1);
  const std::vector<Grant> moved = rs.poll(t + kUs);
  ASSERT_NE(find_grant(moved, 2), nullptr);
  EXPECT_EQ(find_grant(moved, 2)->priority, 5);
  ASSERT_NE(find_grant(moved, 3), nullptr);
  EXPECT_EQ(find_grant(moved, 3)->priority, 4);
}

// Grants the scheduler emits, delivered to senders at once, keep the rates
// in effect within the link's budget through a run of random runtime changes.
TEST(ReceiverSchedulerTest, RandomRuntimeChangesKeepTotalWithinBudget) {
  std::mt19937_64 rng(31337);
  ReceiverConfig config;
  config.grants.change_threshold = 0.0;  // see grant_test: hysteresis breaks the bound
  ReceiverScheduler rs(config);
  std::map<FlowId, GrantHolder> senders;
  TimePs t = kMs;
  FlowId next_id = 1;
  for (int step = 0; step < 2000; ++step) {
    const std::uint64_t op = rng() % 10;
    if (op < 3 || rs.flows().empty()) {
      if (rng() % 2 == 0) {
        rs.add_flow(urgent(next_id++, 10'000 + rng() % 5'000'000,
                           t + 20 * kUs + static_cast<TimePs>(rng() % (5 * kMs))));
      } else {
        rs.add_flow(background(next_id++, 10'000 + rng() % 50'000'000));
      }
    } else {
      const SemanticFlow& f = rs.flows()[rng() % rs.flows().size()];
      if (op == 3 && f.urgent()) {
        rs.update_no_bubble(f.id, t + static_cast<TimePs>(rng() % (5 * kMs)));
      } else if (op == 4) {
        rs.set_sender_cap(f.id, static_cast<double>(1 + rng() % 100) * kGbps);
      } else if (op == 5) {
        rs.note_unscheduled(rng() % 20'000, t);
      } else if (op == 6) {
        rs.update_remaining(f.id, f.remaining_bytes / 2);
      } else if (op == 7) {
        // A finished flow leaves; its sender has nothing more to send.
        const FlowId gone = f.id;
        rs.remove_flow(gone);
        senders.erase(gone);
      }
    }
    for (const Grant& g : rs.poll(t)) senders[g.flow].accept(g, t);
    double in_effect = 0;
    for (const auto& [id, holder] : senders) {
      if (holder.active(t)) in_effect += holder.grant().rate_bps;  // an unused lease lapses
    }
    // At most the larger of the two budgets (normal 97, overload 100).
    ASSERT_LE(in_effect, 100 * kGbps * (1 + 1e-9)) << "step " << step;
    ASSERT_LE(rs.allocation().total_bps(), rs.allocation().budget_bps * (1 + 1e-9));
    const TimePs next = rs.next_poll_ps();
    ASSERT_GE(next, 0);
    t = std::min(t + static_cast<TimePs>(rng() % (30 * kUs)), std::max(next, t));
  }
}

// Sustained overload: a stream of urgent flows at 120% of the budget, due
// 300 us after they arrive, and one endless background flow. Bytes drain at
// the allocated rates (a fluid model), finished flows leave.
struct OverloadRun {
  bool floor_dropped_early = false;  // no floor while background's history was fine
  double first_protected_ps = -1;    // when the guard first kept the floor
  double background_bits_late = 0;   // background bits over the last 50 ms
};

// `blind_background_bytes` arrive blind every 10 us (background's), with
// urgent_over_blind_background set when it is not zero.
OverloadRun run_sustained_overload(std::uint64_t blind_background_bytes = 0) {
  ReceiverConfig config;
  config.urgent_over_blind_background = blind_background_bytes > 0;
  ReceiverScheduler rs(config);
  const double budget = 97 * kGbps;
  const TimePs dt = 10 * kUs;
  const TimePs period = 100 * kUs;
  const TimePs end = 150 * kMs;
  OverloadRun run;
  rs.add_flow(background(1, 1'000'000'000'000));
  std::map<FlowId, double> remaining;
  FlowId next_id = 2;
  for (TimePs t = 0; t < end; t += dt) {
    if (t % period == 0) {
      const auto bytes = static_cast<std::uint64_t>(
          1.2 * budget / 8.0 * static_cast<double>(period) / static_cast<double>(kPsPerSec));
      rs.add_flow(urgent(next_id, bytes, t + 300 * kUs));
      remaining[next_id++] = static_cast<double>(bytes);
    }
    if (blind_background_bytes > 0) rs.note_unscheduled(blind_background_bytes, t, true);
    rs.poll(t);
    const Allocation& a = rs.allocation();
    if (t > 2 * kMs && t < 10 * kMs && !a.urgent_feasible && a.background_floor_bps == 0) {
      run.floor_dropped_early = true;
    }
    if (run.first_protected_ps < 0 && t > 2 * kMs && !a.urgent_feasible &&
        a.background_floor_bps > 0) {
      run.first_protected_ps = static_cast<double>(t);
    }
    for (const FlowAllocation& f : a.flows) {
      if (f.id == 1) {
        if (t >= end - 50 * kMs)
          run.background_bits_late +=
              f.rate_bps * static_cast<double>(dt) / static_cast<double>(kPsPerSec);
        continue;
      }
      auto it = remaining.find(f.id);
      if (it == remaining.end()) continue;
      it->second -= f.rate_bps * static_cast<double>(dt) / static_cast<double>(kPsPerSec) / 8.0;
      if (it->second <= 0.5) {
        rs.remove_flow(f.id);
        remaining.erase(it);
      } else {
        rs.update_remaining(f.id, static_cast<std::uint64_t>(std::ceil(it->second)));
      }
    }
  }
  return run;
}

// The starvation guard: under overload the floor is first given up, and
// kept again once background's long-run share falls below half the floor.
TEST(ReceiverSchedulerTest, StarvationGuardReinstatesFloorUnderOverload) {
  const OverloadRun run = run_sustained_overload();
  EXPECT_TRUE(run.floor_dropped_early);
  EXPECT_GT(run.first_protected_ps, 0.0);
  EXPECT_LT(run.first_protected_ps, static_cast<double>(100 * kMs));
}

// Once the guard keeps the floor, background really gets it: over the last
// 50 ms it averages at least a quarter of the floor (the guard holds its
// long-run share near half the floor).
TEST(ReceiverSchedulerTest, StarvationGuardActuallyFeedsBackground) {
  const OverloadRun run = run_sustained_overload();
  const double floor_bits = 0.01 * 97 * kGbps * 0.05;  // 1% of the budget for 50 ms
  EXPECT_GE(run.background_bits_late, 0.25 * floor_bits);
}

// The same with 5 Gbit/s of blind background arriving and
// urgent_over_blind_background: the blind background (more than the floor)
// must not take the floor's place, or granted background, below it in the
// switches, would get nothing while the guard is engaged.
TEST(ReceiverSchedulerTest, StarvationGuardFeedsGrantedBackgroundBesideBlindBackground) {
  const OverloadRun run = run_sustained_overload(6'250);  // 5 Gbit/s in 10 us
  const double floor_bits = 0.01 * 92 * kGbps * 0.05;     // 1% of 97 - 5 for 50 ms
  EXPECT_TRUE(run.floor_dropped_early);
  EXPECT_GE(run.background_bits_late, 0.25 * floor_bits);
}

}  // namespace
}  // namespace safs::core

namespace safs::core {
namespace {

// A lower link (unmanaged traffic took part of it) re-plans at once: the
// background flow loses what the budget lost; the urgent flow keeps its need.
TEST(ReceiverSchedulerTest, LoweredLinkReplansWithinTheNewBudget) {
  Fixture f;
  const double urgent_before = rate_of(f.rs, 1);
  const double total_before = f.rs.allocation().total_bps();
  f.rs.set_link_bps(50 * kGbps);
  EXPECT_TRUE(f.rs.has_changes());
  f.rs.poll(Fixture::kT0 + kUs);
  EXPECT_LE(f.rs.allocation().total_bps(), 50 * kGbps);
  EXPECT_LT(f.rs.allocation().total_bps(), total_before);
  EXPECT_NEAR(rate_of(f.rs, 1), urgent_before, 0.01 * urgent_before);
  f.rs.set_link_bps(50 * kGbps);  // unchanged: nothing to re-plan
  EXPECT_FALSE(f.rs.has_changes());
}

TEST(ReceiverSchedulerTest, UrgentFirstReplansEarliestDeadlineAtLineRate) {
  Fixture f;
  const double urgent_before = rate_of(f.rs, 1);
  f.rs.set_urgent_first(true);
  EXPECT_TRUE(f.rs.has_changes());
  EXPECT_TRUE(f.rs.urgent_first());
  f.rs.poll(Fixture::kT0 + kUs);
  // The urgent flow takes the budget but background's floor.
  EXPECT_GT(rate_of(f.rs, 1), 2 * urgent_before);
  EXPECT_NEAR(rate_of(f.rs, 1) + rate_of(f.rs, 2), f.rs.allocation().budget_bps, 1e3);
  f.rs.set_urgent_first(true);  // unchanged: nothing to re-plan
  EXPECT_FALSE(f.rs.has_changes());
  f.rs.set_urgent_first(false);
  f.rs.poll(Fixture::kT0 + 2 * kUs);
  EXPECT_NEAR(rate_of(f.rs, 1), urgent_before, 0.01 * urgent_before);
}

}  // namespace
}  // namespace safs::core
