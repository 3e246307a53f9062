// Transfers announced ahead (ReceiverScheduler::announce): planned and
// granted only from announce_lead_ps before their projected start, handed to
// their real flow when it comes, dropped when it never does, bounded, and a
// warning when the urgent set they join cannot all be on time.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "core/grant.h"
#include "core/receiver_scheduler.h"
#include "core/semantic_flow.h"
#include "core/types.h"

namespace safs::core {
namespace {

constexpr TimePs kUs = kPsPerUs;
constexpr TimePs kMs = 1000 * kPsPerUs;
constexpr std::uint32_t kSender = 3;
constexpr std::uint64_t kDependency = 42;

Announcement announcement(std::uint32_t number, std::uint64_t bytes, TimePs start, TimePs no_bubble,
                          std::uint64_t dependency = kDependency) {
  return {.planned_id = planned_flow_id(kSender, number),
          .sender = kSender,
          .size_bytes = bytes,
          .start_ps = start,
          .no_bubble_ps = no_bubble,
          .dependency = dependency};
}

SemanticFlow real_flow(FlowId id, std::uint64_t bytes, TimePs no_bubble, bool under_plan_lease) {
  return {.id = id,
          .sender = kSender,
          .size_bytes = bytes,
          .remaining_bytes = bytes,
          .no_bubble_ps = no_bubble,
          .dependency = kDependency,
          .urgency = Urgency::kUrgent,
          .on_stream_lease = under_plan_lease};
}

SemanticFlow background(FlowId id) {
  return {.id = id, .sender = 9, .size_bytes = 1'000'000'000, .remaining_bytes = 1'000'000'000};
}

const Grant* grant_for(const std::vector<Grant>& grants, FlowId id) {
  for (const Grant& g : grants) {
    if (g.flow == id) return &g;
  }
  return nullptr;
}

// Announces a 10 MB transfer that starts at `start`, due 1 ms later, and
// polls at its lead: it is planned. Returns that poll's grants.
std::vector<Grant> plan_one(ReceiverScheduler& scheduler, const ReceiverConfig& config,
                            TimePs start) {
  scheduler.announce(announcement(5, 10'000'000, start, start + kMs), 0);
  return scheduler.poll(start - config.announce_lead_ps);
}

TEST(AnnounceTest, PlannedAndGrantedOnlyFromTheLeadBeforeItsStart) {
  ReceiverConfig config;
  ReceiverScheduler scheduler(config);
  scheduler.add_flow(background(1));
  scheduler.poll(0);
  const TimePs start = 100 * kUs;  // within the background's first lease
  // 10 MB due 1 ms after its start: 80 Gbit/s of a 100 Gbit/s link.
  ASSERT_EQ(scheduler.announce(announcement(5, 10'000'000, start, start + kMs), 0),
            AnnounceOutcome::kPlanned);
  EXPECT_EQ(scheduler.next_poll_ps(),
            std::min(start - config.announce_lead_ps, config.reallocate_every_ps));
  EXPECT_EQ(
      grant_for(scheduler.poll(start - config.announce_lead_ps - 1), planned_flow_id(kSender, 5)),
      nullptr);
  // Break before make: the background gives way at once, the plan's grant
  // follows a control delay later, still ahead of its start.
  const TimePs planned_at = start - config.announce_lead_ps;
  const std::vector<Grant> first = scheduler.poll(planned_at);
  const Grant* cut = grant_for(first, 1);
  ASSERT_NE(cut, nullptr);
  EXPECT_LT(cut->rate_bps, 20e9);
  const Grant* planned = grant_for(first, planned_flow_id(kSender, 5));
  std::vector<Grant> later;
  if (planned == nullptr) {
    EXPECT_EQ(scheduler.next_poll_ps(), planned_at + config.grants.control_delay_ps);
    later = scheduler.poll(planned_at + config.grants.control_delay_ps);
    planned = grant_for(later, planned_flow_id(kSender, 5));
  }
  ASSERT_NE(planned, nullptr);
  EXPECT_GT(planned->rate_bps, 80e9);
}

TEST(AnnounceTest, FlowStartedUnderThePlanTakesItsLeaseWithoutANewGrant) {
  ReceiverConfig config;
  ReceiverScheduler scheduler(config);
  const TimePs start = 100 * kUs;
  ASSERT_NE(grant_for(plan_one(scheduler, config, start), planned_flow_id(kSender, 5)), nullptr);
  scheduler.add_flow(real_flow(77, 10'000'000, start + kMs, true));
  EXPECT_EQ(scheduler.announcements_pending(), 0u);
  ASSERT_EQ(scheduler.flows().size(), 1u);
  EXPECT_EQ(scheduler.flows()[0].id, 77u);
  // Same demand, same rate: its sender already has it.
  EXPECT_TRUE(scheduler.poll(start).empty());
}

TEST(AnnounceTest, FlowStartedBlindDropsThePlanAndIsGrantedAsNew) {
  ReceiverConfig config;
  ReceiverScheduler scheduler(config);
  const TimePs start = 100 * kUs;
  plan_one(scheduler, config, start);
  scheduler.add_flow(real_flow(77, 10'000'000, start + kMs, false));
  EXPECT_EQ(scheduler.announcements_pending(), 0u);
  ASSERT_EQ(scheduler.flows().size(), 1u);
  // Break before make: the plan's grant is gone, the flow's goes a control
  // delay later at the latest.
  std::vector<Grant> grants = scheduler.poll(start);
  if (grant_for(grants, 77) == nullptr)
    grants = scheduler.poll(start + config.grants.control_delay_ps);
  EXPECT_NE(grant_for(grants, 77), nullptr);
}

TEST(AnnounceTest, FlowThatArrivesBeforeThePlanReplacesTheAnnouncement) {
  ReceiverScheduler scheduler(ReceiverConfig{});
  scheduler.announce(announcement(5, 10'000'000, 1 * kMs, 2 * kMs), 0);
  scheduler.add_flow(real_flow(77, 10'000'000, 2 * kMs, false));
  EXPECT_EQ(scheduler.announcements_pending(), 0u);
  scheduler.poll(1 * kMs);
  ASSERT_EQ(scheduler.flows().size(), 1u);
  EXPECT_EQ(scheduler.flows()[0].id, 77u);
}

TEST(AnnounceTest, PlanWhoseFlowNeverComesIsDroppedALeaseAfterItsStart) {
  ReceiverConfig config;
  ReceiverScheduler scheduler(config);
  const TimePs start = 100 * kUs;
  plan_one(scheduler, config, start);
  EXPECT_EQ(scheduler.flows().size(), 1u);
  scheduler.poll(start + config.grants.validity_ps - 1);
  EXPECT_EQ(scheduler.flows().size(), 1u);
  EXPECT_LE(scheduler.next_poll_ps(), start + config.grants.validity_ps);
  EXPECT_EQ(scheduler.announcements_given_up(), 0u);
  scheduler.poll(start + config.grants.validity_ps);
  EXPECT_TRUE(scheduler.flows().empty());
  EXPECT_EQ(scheduler.announcements_pending(), 0u);
  EXPECT_EQ(scheduler.announcements_received(), 1u);
  EXPECT_EQ(scheduler.announcements_given_up(), 1u);
}

// An announcement the receiver hears of only after its flow should have
// come is given up without ever being planned, and counted so.
TEST(AnnounceTest, AnnouncementTooLateToPlanIsGivenUp) {
  ReceiverConfig config;
  ReceiverScheduler scheduler(config);
  scheduler.announce(announcement(5, 10'000, 100 * kUs, kMs), 0);
  scheduler.poll(100 * kUs + config.grants.validity_ps);
  EXPECT_TRUE(scheduler.flows().empty());
  EXPECT_EQ(scheduler.announcements_given_up(), 1u);
}

TEST(AnnounceTest, ForgottenAnnouncementIsNeverPlanned) {
  ReceiverConfig config;
  ReceiverScheduler scheduler(config);
  scheduler.announce(announcement(5, 10'000'000, 100 * kUs, kMs), 0);
  scheduler.forget_announcement(kSender, kDependency);
  EXPECT_TRUE(scheduler.poll(100 * kUs).empty());
  EXPECT_TRUE(scheduler.flows().empty());
}

TEST(AnnounceTest, WarnsWhenTheUrgentSetCannotAllBeOnTime) {
  ReceiverScheduler scheduler(ReceiverConfig{});
  // 100 Gbit/s moves 12.5 MB per ms.
  scheduler.add_flow(real_flow(1, 6'000'000, 1 * kMs, false));
  EXPECT_EQ(scheduler.announce(announcement(5, 6'000'000, 500 * kUs, 1 * kMs, 7), 0),
            AnnounceOutcome::kPlanned);
  // A later timestamp leaves room; one more byte by 1 ms does not.
  EXPECT_EQ(scheduler.announce(announcement(7, 1'000'000, 500 * kUs, 2 * kMs, 9), 0),
            AnnounceOutcome::kPlanned);
  EXPECT_EQ(scheduler.announce(announcement(6, 1'000'000, 500 * kUs, 1 * kMs, 8), 0),
            AnnounceOutcome::kInfeasible);
  EXPECT_EQ(scheduler.announcements_infeasible(), 1u);
  EXPECT_EQ(scheduler.announcements_received(), 3u);
}

// Alone at the receiver, a transfer due 100 us after its projected start
// needs 160 us at 100 Gbit/s: the set looked feasible only while each flow
// was taken to start now.
TEST(AnnounceTest, WarnsWhenATransferCannotBeOnTimeFromItsOwnStart) {
  ReceiverScheduler scheduler(ReceiverConfig{});
  EXPECT_EQ(scheduler.announce(announcement(5, 2'000'000, 500 * kUs, 600 * kUs), 0),
            AnnounceOutcome::kInfeasible);
  EXPECT_EQ(scheduler.announce(announcement(6, 1'000'000, 500 * kUs, 600 * kUs, 8), 0),
            AnnounceOutcome::kPlanned);  // 80 us of 100
}

// Announces two transfers that start at `start` and adds their flows:
// flow 1 (dependency 7, 2 MB due in 100 us: warned, it needs 160 us) and
// flow 2 (dependency 8, 1 MB due in 400 us: not, it needs 80 us).
std::pair<SemanticFlow, SemanticFlow> add_warned_and_unwarned(ReceiverScheduler& scheduler,
                                                              TimePs start) {
  scheduler.announce(announcement(5, 2'000'000, start, start + 100 * kUs, 7), 0);
  scheduler.announce(announcement(6, 1'000'000, start, start + 400 * kUs, 8), 0);
  SemanticFlow warned = real_flow(1, 2'000'000, start + 100 * kUs, false);
  warned.dependency = 7;
  SemanticFlow unwarned = real_flow(2, 1'000'000, start + 400 * kUs, false);
  unwarned.dependency = 8;
  scheduler.add_flow(warned);
  scheduler.add_flow(unwarned);
  return {warned, unwarned};
}

// Announced transfers are judged at their last byte, by whether they were
// warned of: the warning's hits and misses.
TEST(AnnounceTest, AnnouncedTransfersAreCountedByWarningAndLateness) {
  ReceiverScheduler scheduler(ReceiverConfig{});
  const TimePs start = 500 * kUs;
  add_warned_and_unwarned(scheduler, start);
  SemanticFlow unannounced = real_flow(3, 1000, start + 400 * kUs, false);
  unannounced.dependency = 9;
  scheduler.add_flow(unannounced);
  // Dependency 10: due 400 us after its start when announced, its consumer
  // then fell behind and moved it to 900 us; judged by the announced one.
  scheduler.announce(announcement(7, 1'000'000, start, start + 400 * kUs, 10), 0);
  SemanticFlow moved = real_flow(4, 1'000'000, start + 900 * kUs, false);
  moved.dependency = 10;
  scheduler.add_flow(moved);
  scheduler.complete_flow(4, start + 600 * kUs);  // late for what was announced
  scheduler.complete_flow(1, start + 160 * kUs);  // late
  scheduler.complete_flow(2, start + 80 * kUs);   // on time
  scheduler.complete_flow(3, start + 900 * kUs);  // late, but never announced
  const AnnouncedOutcomes& o = scheduler.announced_outcomes();
  EXPECT_EQ(o.warned_late, 1u);
  EXPECT_EQ(o.warned_on_time, 0u);
  EXPECT_EQ(o.unwarned_late, 1u);
  EXPECT_EQ(o.unwarned_on_time, 1u);
}

// A flow set aside (the runtime's ghost: it sent nothing for a while) and
// then back is judged at its last byte as announced, once, and leaves a
// newer plan of its sender for the same op alone; one removed for good is
// not judged, even if a flow with its id is added later.
TEST(AnnounceTest, AFlowSetAsideAndBackIsStillJudgedAsAnnounced) {
  ReceiverScheduler scheduler(ReceiverConfig{});
  const TimePs start = 500 * kUs;
  const auto [ghost, dropped] = add_warned_and_unwarned(scheduler, start);
  scheduler.set_aside_flow(1);
  scheduler.remove_flow(2);
  EXPECT_EQ(scheduler.flows().size(), 0u);
  scheduler.announce(announcement(7, 2'000'000, start, start + 100 * kUs, 7), 0);  // the next one
  EXPECT_EQ(scheduler.announcements_pending(), 1u);
  scheduler.add_flow(ghost);
  EXPECT_EQ(scheduler.announcements_pending(), 1u);  // not the ghost's
  scheduler.add_flow(dropped);
  scheduler.complete_flow(1, start + 160 * kUs);  // late, as warned
  scheduler.complete_flow(2, start + 500 * kUs);  // late, but no longer announced
  const AnnouncedOutcomes& o = scheduler.announced_outcomes();
  EXPECT_EQ(o.warned_late, 1u);
  EXPECT_EQ(o.warned_on_time + o.unwarned_late + o.unwarned_on_time, 0u);
}

TEST(AnnounceTest, AnnouncementsAreBounded) {
  ReceiverConfig config;
  config.max_announcements = 4;
  ReceiverScheduler scheduler(config);
  for (std::uint32_t i = 0; i < 4; ++i) {
    EXPECT_NE(scheduler.announce(announcement(i, 1000, 10 * kMs, 20 * kMs, 100 + i), 0),
              AnnounceOutcome::kDropped);
  }
  EXPECT_EQ(scheduler.announce(announcement(9, 1000, 10 * kMs, 20 * kMs, 200), 0),
            AnnounceOutcome::kDropped);
  EXPECT_EQ(scheduler.announcements_dropped(), 1u);
  EXPECT_EQ(scheduler.announcements_received(), 5u);
  EXPECT_EQ(scheduler.announcements_pending(), 4u);
}

}  // namespace
}  // namespace safs::core

namespace safs::core {
namespace {

// Random announcements at a receiver beside background: some transfers start
// under their plan, some blind, some early, some never. Whatever happens, the
// allocation never grants more than the link, and once every transfer has
// started, finished or been given up on, no plan or announcement is left.
TEST(AnnounceTest, RandomPlansNeverOverGrantAndAreAllCleanedUp) {
  std::mt19937_64 rng(0xa22);
  for (int instance = 0; instance < 50; ++instance) {
    ReceiverConfig config;
    ReceiverScheduler scheduler(config);
    scheduler.add_flow(background(1));
    struct Pending {
      Announcement a;
      int fate;  // 0: under its plan, 1: blind, 2: never
      bool started = false;
    };
    std::vector<Pending> pending;
    FlowId next_real = 100;
    TimePs now = 0;
    for (int step = 0; step < 200; ++step) {
      now += static_cast<TimePs>(rng() % 20) * kUs;
      if (rng() % 3 == 0) {
        const auto number = static_cast<std::uint32_t>(step);
        const TimePs start = now + static_cast<TimePs>(rng() % 200) * kUs;
        const std::uint64_t bytes = 100'000 + rng() % 5'000'000;
        const TimePs due = start + static_cast<TimePs>(50 + rng() % 2000) * kUs;
        Pending p{announcement(number, bytes, start, due, 1000 + number),
                  static_cast<int>(rng() % 3)};
        scheduler.announce(p.a, now);
        pending.push_back(p);
      }
      for (Pending& p : pending) {
        // A transfer starts within 30 us of its projected start, either way.
        if (p.started || p.fate == 2 || now + 30 * kUs < p.a.start_ps) continue;
        p.started = true;
        SemanticFlow f = real_flow(next_real++, p.a.size_bytes, p.a.no_bubble_ps, p.fate == 0);
        f.dependency = p.a.dependency;
        scheduler.add_flow(f);
      }
      scheduler.poll(now);
      double granted_bps = 0;
      for (const FlowAllocation& a : scheduler.allocation().flows) granted_bps += a.rate_bps;
      ASSERT_LE(granted_bps, config.allocator.link_bps * (1 + 1e-9)) << "instance " << instance;
    }
    // A lease after the last projected start, every plan has gone.
    scheduler.poll(now + 200 * kUs + config.grants.validity_ps);
    EXPECT_EQ(scheduler.announcements_pending(), 0u) << "instance " << instance;
    for (const SemanticFlow& f : scheduler.flows()) {
      EXPECT_FALSE(is_planned(f.id)) << "instance " << instance;
    }
  }
}

}  // namespace
}  // namespace safs::core
