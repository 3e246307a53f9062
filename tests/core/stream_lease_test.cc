// Stream leases (GrantIssuer::retire/adopt, ReceiverScheduler::complete_flow):
// a finished flow's lease stays reserved for its stream's next transfer, the
// next transfer started under it needs no grant, and the reserved rate never
// lets the allocation exceed the budget.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/grant.h"
#include "core/grant_issuer.h"
#include "core/receiver_scheduler.h"
#include "core/semantic_flow.h"
#include "core/types.h"

namespace safs::core {
namespace {

constexpr TimePs kUs = kPsPerUs;
constexpr TimePs kMs = 1000 * kPsPerUs;
constexpr StreamId kStream = 7;

SemanticFlow on_stream(FlowId id, std::uint64_t bytes, TimePs no_bubble, bool under_lease) {
  return {.id = id,
          .size_bytes = bytes,
          .remaining_bytes = bytes,
          .no_bubble_ps = no_bubble,
          .urgency = Urgency::kUrgent,
          .stream = kStream,
          .on_stream_lease = under_lease};
}

double total_rate(const Allocation& a) {
  double sum = 0;
  for (const FlowAllocation& f : a.flows) sum += f.rate_bps;
  return sum;
}

TEST(StreamLeaseTest, RetiredLeaseIsAdoptedWithoutAGrant) {
  GrantIssuer issuer{GrantConfig{}};
  ASSERT_EQ(issuer.update({{1, 40e9, 5}}, 0).size(), 1u);
  issuer.retire(1, kStream, 10 * kUs);
  EXPECT_DOUBLE_EQ(issuer.reserved_bps(), 40e9);
  ASSERT_TRUE(issuer.adopt(2, kStream));
  EXPECT_DOUBLE_EQ(issuer.reserved_bps(), 0);
  // The same rate and priority: nothing to send.
  EXPECT_TRUE(issuer.update({{2, 41e9, 5}}, 20 * kUs).empty());
  // A move past theta is granted.
  EXPECT_EQ(issuer.update({{2, 60e9, 5}}, 30 * kUs).size(), 1u);
}

TEST(StreamLeaseTest, AdoptedLeaseIsRefreshedBeforeItEnds) {
  GrantConfig config;
  GrantIssuer issuer{config};
  issuer.update({{1, 40e9, 5}}, 0);
  issuer.retire(1, kStream, 10 * kUs);
  ASSERT_TRUE(issuer.adopt(2, kStream));
  issuer.update({{2, 40e9, 5}}, 20 * kUs);
  EXPECT_EQ(issuer.next_due_ps(), config.validity_ps - config.refresh_margin_ps);
  const std::vector<Grant> refresh = issuer.due(config.validity_ps - config.refresh_margin_ps);
  ASSERT_EQ(refresh.size(), 1u);
  EXPECT_EQ(refresh[0].flow, 2u);
}

TEST(StreamLeaseTest, LeaseEndsOneControlDelayAfterTheReceiversEstimate) {
  GrantConfig config;
  GrantIssuer issuer{config};
  issuer.update({{1, 40e9, 5}}, 0);
  issuer.retire(1, kStream, 10 * kUs);
  const TimePs end = config.validity_ps + config.control_delay_ps;
  EXPECT_EQ(issuer.next_due_ps(), end);
  EXPECT_FALSE(issuer.expire_streams(end - 1));
  EXPECT_TRUE(issuer.expire_streams(end));
  EXPECT_DOUBLE_EQ(issuer.reserved_bps(), 0);
  EXPECT_FALSE(issuer.adopt(2, kStream));
}

TEST(StreamLeaseTest, PausedOrLapsedLeasesAreNotKept) {
  GrantConfig config;
  GrantIssuer issuer{config};
  issuer.update({{1, 0, 5}}, 0);  // paused
  issuer.retire(1, kStream, 10 * kUs);
  EXPECT_FALSE(issuer.adopt(2, kStream));
  issuer.update({{3, 40e9, 5}}, 0);
  issuer.retire(3, kStream, config.validity_ps);  // over
  EXPECT_FALSE(issuer.adopt(4, kStream));
}

TEST(StreamLeaseTest, SchedulerKeepsTheReservedRateOutOfTheAllocation) {
  ReceiverConfig config;
  ReceiverScheduler rs(config);
  const TimePs deadline = 2 * kMs;
  SemanticFlow other = on_stream(2, 400'000'000, kTimeNever, false);  // another sender's
  other.stream = 0;
  other.urgency = Urgency::kBackground;
  rs.add_flow(on_stream(1, 4'000'000, deadline, false));
  rs.add_flow(other);
  ASSERT_FALSE(rs.poll(0).empty());
  const double granted = rs.allocation().flows.at(0).rate_bps;
  const double budget = config.allocator.usable_fraction * config.allocator.link_bps;
  ASSERT_LT(granted, 0.5 * budget);  // just in time, the rest to background
  rs.complete_flow(1, 100 * kUs);
  rs.poll(100 * kUs);
  // Background gets the budget less the stream's reserved rate.
  EXPECT_NEAR(total_rate(rs.allocation()) + granted, budget, 1e-6 * budget);
  // The stream's next transfer, started under the lease, takes it over: no
  // grant for it unless its rate moved past theta.
  rs.add_flow(on_stream(3, 4'000'000, deadline + 100 * kUs, true));
  const std::vector<Grant> grants = rs.poll(120 * kUs);
  for (const Grant& g : grants) {
    if (g.flow == 3) {
      EXPECT_GT(std::abs(g.rate_bps - granted), config.grants.change_threshold * granted);
    }
  }
  EXPECT_LE(total_rate(rs.allocation()), budget * (1 + 1e-9));
}

TEST(StreamLeaseTest, ExpiredReservationFreesCapacityAtTheNextPoll) {
  ReceiverConfig config;
  ReceiverScheduler rs(config);
  rs.add_flow(on_stream(1, 4'000'000, 2 * kMs, false));
  rs.poll(0);
  rs.complete_flow(1, 100 * kUs);
  rs.poll(100 * kUs);
  const TimePs end = config.grants.validity_ps + config.grants.control_delay_ps;
  EXPECT_EQ(rs.next_poll_ps(), end);
  SemanticFlow bg = on_stream(2, 400'000'000, kTimeNever, false);
  bg.stream = 0;
  bg.urgency = Urgency::kBackground;
  rs.add_flow(bg);
  rs.poll(200 * kUs);
  const double before = total_rate(rs.allocation());
  rs.poll(end);
  EXPECT_GT(total_rate(rs.allocation()), before);
}

}  // namespace
}  // namespace safs::core
