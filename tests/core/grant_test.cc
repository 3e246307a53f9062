// Reusable grants: the sender's GrantHolder (epochs, lease, byte cap) and
// the receiver's GrantIssuer (what to send when: first grants, the change
// threshold, priority changes, lease refreshes, break before make), with a
// randomized check that the rates in effect at the senders never exceed the
// budget at any instant.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "core/grant.h"
#include "core/grant_issuer.h"
#include "core/types.h"

namespace safs::core {
namespace {

constexpr TimePs kUs = kPsPerUs;
constexpr double kGbps = 1e9;

Grant make_grant(FlowId flow, std::uint32_t epoch, double rate, TimePs valid_for,
                 std::uint64_t byte_cap) {
  Grant g;
  g.flow = flow;
  g.epoch = epoch;
  g.rate_bps = rate;
  g.valid_for_ps = valid_for;
  g.byte_cap = byte_cap;
  return g;
}

const Grant* find_grant(const std::vector<Grant>& grants, FlowId flow) {
  for (const Grant& g : grants) {
    if (g.flow == flow) return &g;
  }
  return nullptr;
}

// ---------------------------------------------------------------------------
// GrantHolder.

TEST(GrantHolderTest, StartsEmptyAndInactive) {
  const GrantHolder h;
  EXPECT_FALSE(h.held());
  EXPECT_FALSE(h.active(0));
  EXPECT_FALSE(h.active(kTimeNever - 1));
}

TEST(GrantHolderTest, RejectsStaleAndReorderedEpochs) {
  GrantHolder h;
  EXPECT_TRUE(h.accept(make_grant(1, 3, 30 * kGbps, 100 * kUs, 1'000'000), 0));
  EXPECT_FALSE(h.accept(make_grant(1, 2, 20 * kGbps, 100 * kUs, 1'000'000), 1));  // older
  EXPECT_EQ(h.grant().epoch, 3u);
  EXPECT_EQ(h.grant().rate_bps, 30 * kGbps);
  EXPECT_FALSE(h.accept(make_grant(1, 3, 10 * kGbps, 100 * kUs, 1'000'000), 2));  // duplicate
  EXPECT_EQ(h.grant().rate_bps, 30 * kGbps);
  EXPECT_EQ(h.expires_ps(), 100 * kUs);  // the rejected grants did not renew the lease
  EXPECT_TRUE(h.accept(make_grant(1, 4, 40 * kGbps, 100 * kUs, 1'000'000), 3));
  EXPECT_EQ(h.grant().rate_bps, 40 * kGbps);
  EXPECT_EQ(h.expires_ps(), 3 + 100 * kUs);
}

TEST(GrantHolderTest, ExpiresAfterValidity) {
  GrantHolder h;
  const TimePs received = 7 * kUs;
  ASSERT_TRUE(h.accept(make_grant(1, 1, 10 * kGbps, 50 * kUs, 1'000'000), received));
  EXPECT_EQ(h.expires_ps(), received + 50 * kUs);  // relative to receipt
  EXPECT_TRUE(h.active(received));
  EXPECT_TRUE(h.active(received + 50 * kUs - 1));
  EXPECT_FALSE(h.active(received + 50 * kUs));
  EXPECT_TRUE(h.held());  // still held, just not active
  // A newer grant renews the lease.
  ASSERT_TRUE(h.accept(make_grant(1, 2, 10 * kGbps, 50 * kUs, 1'000'000), received + 60 * kUs));
  EXPECT_TRUE(h.active(received + 100 * kUs));
}

TEST(GrantHolderTest, InactiveAfterByteCap) {
  GrantHolder h;
  ASSERT_TRUE(h.accept(make_grant(1, 1, 10 * kGbps, 500 * kUs, 10'000), 0));
  h.on_sent(9'999);
  EXPECT_TRUE(h.active(1));
  h.on_sent(1);
  EXPECT_FALSE(h.active(1));
  // A new grant starts a fresh byte count.
  ASSERT_TRUE(h.accept(make_grant(1, 2, 10 * kGbps, 500 * kUs, 10'000), 2));
  EXPECT_TRUE(h.active(3));
  h.on_sent(10'000);
  EXPECT_FALSE(h.active(3));
}

// ---------------------------------------------------------------------------
// GrantIssuer: what goes out when.

TEST(GrantIssuerTest, FirstGrantIsIssuedWithLeaseAndByteCap) {
  const GrantConfig c;  // validity 500 us, slack 65536 B
  GrantIssuer issuer(c);
  const std::vector<Grant> out = issuer.update({{1, 80 * kGbps, 5}}, 0);
  ASSERT_EQ(out.size(), 1u);
  const Grant& g = out[0];
  EXPECT_EQ(g.flow, 1u);
  EXPECT_EQ(g.rate_bps, 80 * kGbps);
  EXPECT_EQ(g.priority, 5);
  EXPECT_EQ(g.epoch, 1u);
  EXPECT_EQ(g.valid_for_ps, 500 * kUs);
  // 80 Gbit/s for 500 us = 5 MB, plus the slack.
  EXPECT_EQ(g.byte_cap, 5'000'000u + 65'536u);
  EXPECT_EQ(issuer.grants_issued(), 1u);
}

TEST(GrantIssuerTest, ByteCapIsRateTimesValidityPlusSlack) {
  GrantConfig c;
  c.validity_ps = 100 * kUs;
  c.cap_slack_bytes = 1000;
  GrantIssuer issuer(c);
  const std::vector<Grant> out = issuer.update({{1, 1 * kGbps, 0}, {2, 0.0, 0}}, 0);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(find_grant(out, 1)->byte_cap, 12'500u + 1000u);  // 1e5 bit = 12500 B
  EXPECT_EQ(find_grant(out, 2)->byte_cap, 1000u);            // rate 0: slack only

  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> rate(0, 400e9);
  for (int i = 0; i < 1000; ++i) {
    GrantIssuer fresh(c);
    const double r = rate(rng);
    const std::vector<Grant> g = fresh.update({{9, r, 0}}, 0);
    ASSERT_EQ(g.size(), 1u);
    const double expected =
        r * static_cast<double>(c.validity_ps) / static_cast<double>(kPsPerSec) / 8.0;
    ASSERT_NEAR(static_cast<double>(g[0].byte_cap), std::floor(expected) + 1000.0, 1.0);
  }
}

TEST(GrantIssuerTest, ChangeThreshold) {
  const GrantConfig c;  // theta 0.1
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 10 * kGbps, 3}}, 0).size(), 1u);
  EXPECT_TRUE(issuer.update({{1, 10.9 * kGbps, 3}}, 1 * kUs).empty());  // +9%
  EXPECT_TRUE(issuer.update({{1, 9.2 * kGbps, 3}}, 2 * kUs).empty());   // -8%
  EXPECT_TRUE(issuer.update({{1, 10 * kGbps, 3}}, 3 * kUs).empty());    // unchanged
  // Still measured against the rate last sent (10), not the last target.
  const std::vector<Grant> up = issuer.update({{1, 11.5 * kGbps, 3}}, 4 * kUs);  // +15%
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].rate_bps, 11.5 * kGbps);
  EXPECT_EQ(up[0].epoch, 2u);
  // Now relative to 11.5: -12% is sent (a decrease, at once).
  const std::vector<Grant> down = issuer.update({{1, 10.1 * kGbps, 3}}, 50 * kUs);
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].rate_bps, 10.1 * kGbps);
  EXPECT_EQ(down[0].epoch, 3u);
  EXPECT_EQ(issuer.grants_issued(), 3u);
}

TEST(GrantIssuerTest, ZeroRateTransitions) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 0.0, 1}}, 0).size(), 1u);  // the first grant, even at 0
  EXPECT_TRUE(issuer.update({{1, 0.0, 1}}, kUs).empty());
  const std::vector<Grant> up = issuer.update({{1, 1.0, 1}}, 2 * kUs);  // any rate above 0
  ASSERT_EQ(up.size(), 1u);
  EXPECT_EQ(up[0].rate_bps, 1.0);
  const std::vector<Grant> down = issuer.update({{1, 0.0, 1}}, 3 * kUs);  // back to 0: -100%
  ASSERT_EQ(down.size(), 1u);
  EXPECT_EQ(down[0].rate_bps, 0.0);
}

TEST(GrantIssuerTest, PriorityChangeIssues) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 10 * kGbps, 5}}, 0).size(), 1u);
  const std::vector<Grant> out = issuer.update({{1, 10.2 * kGbps, 4}}, kUs);  // +2%, new priority
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].priority, 4);
  EXPECT_EQ(out[0].rate_bps, 10.2 * kGbps);
  EXPECT_EQ(out[0].epoch, 2u);
  // The same priority again: nothing.
  EXPECT_TRUE(issuer.update({{1, 10.2 * kGbps, 4}}, 2 * kUs).empty());
}

// Each grant is counted once, by why it went, under its flow's class at the
// time; a refresh keeps the class of the grant it renews.
TEST(GrantIssuerTest, GrantsAreCountedByReason) {
  const GrantConfig c;  // theta 10%, validity 500 us, refresh margin 20 us
  GrantIssuer issuer(c);
  const auto urgent = [](double rate_bps, std::uint8_t priority) {
    return GrantTarget{1, rate_bps, priority, true};
  };
  const auto reason = [](GrantReason r) { return static_cast<std::size_t>(r); };
  issuer.update({urgent(10 * kGbps, 5), {2, 0.0, 1}}, 0);         // two first grants
  issuer.update({urgent(12 * kGbps, 5), {2, 0.0, 1}}, kUs);       // an increase
  issuer.update({urgent(6 * kGbps, 5), {2, 0.0, 1}}, 2 * kUs);    // a decrease
  issuer.update({urgent(6 * kGbps, 4), {2, 0.0, 1}}, 3 * kUs);    // a new priority
  issuer.update({urgent(6.1 * kGbps, 4), {2, 0.0, 1}}, 4 * kUs);  // within theta: none
  // Resumed once the last decrease has had its control delay (break before make).
  issuer.update({urgent(6.1 * kGbps, 4), {2, 5 * kGbps, 1}}, 10 * kUs);
  issuer.note_data(1);
  issuer.note_data(2);
  EXPECT_EQ(issuer.due(10 * kUs + 480 * kUs).size(), 2u);  // both refreshed
  // Flow 2's refreshed lease goes unused and lapses (flow 1's, used, is
  // refreshed); granted again when its data comes, flow 2 is resumed, not new.
  issuer.note_data(1);
  EXPECT_EQ(issuer.due(10 * kUs + 980 * kUs).size(), 1u);
  EXPECT_TRUE(issuer.note_data(2));
  EXPECT_EQ(issuer.update({urgent(6.1 * kGbps, 4), {2, 5 * kGbps, 1}}, 10 * kUs + 990 * kUs).size(),
            1u);
  const GrantCounts& counts = issuer.grant_counts();
  EXPECT_EQ(counts.urgent[reason(GrantReason::kFirst)], 1u);
  EXPECT_EQ(counts.urgent[reason(GrantReason::kIncrease)], 1u);
  EXPECT_EQ(counts.urgent[reason(GrantReason::kDecrease)], 1u);
  EXPECT_EQ(counts.urgent[reason(GrantReason::kPriority)], 1u);
  EXPECT_EQ(counts.urgent[reason(GrantReason::kResume)], 0u);
  EXPECT_EQ(counts.urgent[reason(GrantReason::kRefresh)], 2u);  // at 490 and 990 us
  EXPECT_EQ(counts.background[reason(GrantReason::kFirst)], 1u);
  EXPECT_EQ(counts.background[reason(GrantReason::kResume)], 2u);
  EXPECT_EQ(counts.background[reason(GrantReason::kRefresh)], 1u);
  std::uint64_t all = 0;
  for (std::size_t r = 0; r < kGrantReasons; ++r) all += counts.urgent[r] + counts.background[r];
  EXPECT_EQ(all, issuer.grants_issued());
}

TEST(GrantIssuerTest, RemovedThenReAddedFlowGetsAGrant) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 10 * kGbps, 5}, {2, 20 * kGbps, 1}}, 0).size(), 2u);
  EXPECT_TRUE(issuer.update({{2, 20 * kGbps, 1}}, 10 * kUs).empty());  // 1 gone: nothing to say
  const std::vector<Grant> out = issuer.update({{1, 10 * kGbps, 5}, {2, 20 * kGbps, 1}}, 20 * kUs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].flow, 1u);
  EXPECT_EQ(out[0].rate_bps, 10 * kGbps);
}

// Regression: a flow that leaves the targets and comes back must get grants
// the sender accepts. Epochs once restarted at 1 for the re-added flow, and a
// sender still holding its old lease rejected them as stale. Epochs are now
// receiver-wide, so they increase per flow without keeping state for gone
// flows.
TEST(GrantIssuerTest, ReAddedFlowGrantIsAcceptedBySender) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  GrantHolder sender;
  std::vector<Grant> out = issuer.update({{1, 10 * kGbps, 5}}, 0);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(sender.accept(out[0], 0));
  out = issuer.update({{1, 30 * kGbps, 5}}, 10 * kUs);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_TRUE(sender.accept(out[0], 10 * kUs));  // epoch 2
  EXPECT_TRUE(issuer.update({}, 20 * kUs).empty());
  out = issuer.update({{1, 50 * kGbps, 5}}, 30 * kUs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_GT(out[0].epoch, 2u);
  EXPECT_TRUE(sender.accept(out[0], 30 * kUs));
  EXPECT_EQ(sender.grant().rate_bps, 50 * kGbps);
}

TEST(GrantIssuerTest, LeaseRefreshExactlyOnceAtMargin) {
  const GrantConfig c;  // validity 500 us, refresh margin 20 us
  GrantIssuer issuer(c);
  const TimePs t0 = 3 * kUs;
  ASSERT_EQ(issuer.update({{1, 10 * kGbps, 5}, {2, 0.0, 1}}, t0).size(), 2u);
  const TimePs refresh_at = t0 + 500 * kUs - 20 * kUs;
  EXPECT_EQ(issuer.next_due_ps(), refresh_at);
  EXPECT_TRUE(issuer.due(t0 + 100 * kUs).empty());
  EXPECT_TRUE(issuer.due(refresh_at - 1).empty());
  EXPECT_TRUE(issuer.update({{1, 10 * kGbps, 5}, {2, 0.0, 1}}, refresh_at - 1).empty());
  EXPECT_FALSE(issuer.note_data(1));  // flow 1 uses its lease
  // Both leases are refreshed (a zero-rate grant too: it holds the sender
  // at zero rather than letting it fall back to background).
  const std::vector<Grant> refresh = issuer.due(refresh_at);
  ASSERT_EQ(refresh.size(), 2u);
  ASSERT_NE(find_grant(refresh, 1), nullptr);
  EXPECT_EQ(find_grant(refresh, 1)->rate_bps, 10 * kGbps);
  EXPECT_EQ(find_grant(refresh, 1)->priority, 5);
  EXPECT_GT(find_grant(refresh, 1)->epoch, 1u);  // newer than the first grant
  ASSERT_NE(find_grant(refresh, 2), nullptr);
  EXPECT_EQ(find_grant(refresh, 2)->rate_bps, 0.0);
  EXPECT_NE(find_grant(refresh, 2)->epoch, find_grant(refresh, 1)->epoch);
  EXPECT_TRUE(issuer.due(refresh_at).empty());
  EXPECT_TRUE(issuer.due(refresh_at + 100 * kUs).empty());
  EXPECT_EQ(issuer.next_due_ps(), refresh_at + 480 * kUs);
  issuer.note_data(1);
  // update() carries refreshes that fall due too.
  const std::vector<Grant> via_update =
      issuer.update({{1, 10 * kGbps, 5}, {2, 0.0, 1}}, refresh_at + 480 * kUs);
  ASSERT_EQ(via_update.size(), 2u);
  EXPECT_GT(via_update[0].epoch,
            std::max(find_grant(refresh, 1)->epoch, find_grant(refresh, 2)->epoch));
  EXPECT_EQ(issuer.grants_issued(), 6u);
}

// A lease that carried no data is not refreshed: it lapses, the flow gets no
// grant from later updates, and its next data makes it want one again.
TEST(GrantIssuerTest, UnusedLeaseLapsesUntilDataArrives) {
  const GrantConfig c;  // validity 500 us, refresh margin 20 us
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 10 * kGbps, 5}, {2, 20 * kGbps, 5}}, 0).size(), 2u);
  issuer.note_data(2);
  const std::vector<Grant> refresh = issuer.due(480 * kUs);
  ASSERT_EQ(refresh.size(), 1u);
  EXPECT_EQ(refresh[0].flow, 2u);
  EXPECT_EQ(issuer.next_due_ps(), 500 * kUs);  // flow 1's lease ends: it lapses then
  EXPECT_TRUE(issuer.due(500 * kUs).empty());
  EXPECT_FALSE(issuer.all_lapsed());
  EXPECT_TRUE(issuer.due(960 * kUs).empty());  // flow 2 went silent too
  EXPECT_FALSE(issuer.all_lapsed());           // its lease runs until 980 us
  EXPECT_TRUE(issuer.due(980 * kUs).empty());
  EXPECT_TRUE(issuer.all_lapsed());
  EXPECT_EQ(issuer.next_due_ps(), kTimeNever);
  // New targets, even changed ones, grant nothing to a lapsed flow.
  EXPECT_TRUE(issuer.update({{1, 30 * kGbps, 5}, {2, 20 * kGbps, 4}}, 2000 * kUs).empty());
  EXPECT_TRUE(issuer.note_data(1));
  EXPECT_FALSE(issuer.note_data(1));  // once back, later data changes nothing
  const std::vector<Grant> back =
      issuer.update({{1, 30 * kGbps, 5}, {2, 20 * kGbps, 4}}, 2100 * kUs);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].flow, 1u);
  EXPECT_EQ(back[0].rate_bps, 30 * kGbps);
  EXPECT_FALSE(issuer.all_lapsed());
}

// However often the issuer is polled and data arrives, a flow gets at most
// one refresh per lease: over 10 ms of 500 us leases refreshed 20 us early,
// 20 refreshes (10 ms / 480 us) after the first grant.
TEST(GrantIssuerTest, AtMostOneRefreshPerLease) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 10 * kGbps, 5}}, 0).size(), 1u);
  std::uint64_t refreshes = 0;
  for (TimePs t = kUs; t <= 10'000 * kUs; t += kUs) {
    issuer.note_data(1);
    refreshes += issuer.due(t).size();
    refreshes += issuer.update({{1, 10 * kGbps, 5}}, t).size();
  }
  EXPECT_EQ(refreshes, 10'000u / 480u);
  EXPECT_EQ(issuer.grants_issued(), 1 + refreshes);
}

TEST(GrantIssuerTest, NothingDueWithoutFlows) {
  GrantIssuer issuer(GrantConfig{});
  EXPECT_EQ(issuer.next_due_ps(), kTimeNever);
  EXPECT_TRUE(issuer.due(kTimeNever - 1).empty());
  ASSERT_EQ(issuer.update({{1, 1 * kGbps, 0}}, 0).size(), 1u);
  EXPECT_NE(issuer.next_due_ps(), kTimeNever);
  EXPECT_TRUE(issuer.update({}, kUs).empty());
  EXPECT_EQ(issuer.next_due_ps(), kTimeNever);
}

// Decreases go out at once; increases wait one control delay after the
// last decrease; an increase with nothing in flight goes out at once.
TEST(GrantIssuerTest, BreakBeforeMake) {
  const GrantConfig c;  // control delay 5 us
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 60 * kGbps, 1}, {2, 30 * kGbps, 1}}, 0).size(), 2u);

  const TimePs t1 = 100 * kUs;
  const std::vector<Grant> out = issuer.update({{1, 30 * kGbps, 1}, {2, 60 * kGbps, 1}}, t1);
  ASSERT_EQ(out.size(), 1u);  // only the decrease
  EXPECT_EQ(out[0].flow, 1u);
  EXPECT_EQ(out[0].rate_bps, 30 * kGbps);
  EXPECT_EQ(issuer.next_due_ps(), t1 + c.control_delay_ps);
  EXPECT_TRUE(issuer.due(t1 + c.control_delay_ps - 1).empty());
  // Another increase while the decrease is in flight waits as well.
  EXPECT_TRUE(issuer.update({{1, 30 * kGbps, 1}, {2, 60 * kGbps, 1}}, t1 + kUs).empty());
  const std::vector<Grant> later = issuer.due(t1 + c.control_delay_ps);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].flow, 2u);
  EXPECT_EQ(later[0].rate_bps, 60 * kGbps);
  EXPECT_GT(later[0].epoch, 1u);

  // Nothing in flight now: an increase goes out at once.
  const TimePs t2 = t1 + 50 * kUs;
  const std::vector<Grant> now = issuer.update({{1, 35 * kGbps, 1}, {2, 60 * kGbps, 1}}, t2);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].flow, 1u);
  EXPECT_EQ(now[0].rate_bps, 35 * kGbps);
}

// A held-back increase that the next allocation takes back is dropped.
TEST(GrantIssuerTest, HeldIncreaseDroppedWhenTargetReturns) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  ASSERT_EQ(issuer.update({{1, 60 * kGbps, 1}, {2, 30 * kGbps, 1}}, 0).size(), 2u);
  ASSERT_EQ(issuer.update({{1, 30 * kGbps, 1}, {2, 60 * kGbps, 1}}, 10 * kUs).size(), 1u);
  // Flow 2 goes back to 30 before its increase was released.
  EXPECT_TRUE(issuer.update({{1, 30 * kGbps, 1}, {2, 30 * kGbps, 1}}, 11 * kUs).empty());
  EXPECT_TRUE(issuer.due(10 * kUs + c.control_delay_ps).empty());
}

// Epochs strictly increase per flow over random updates and refreshes.
TEST(GrantIssuerTest, EpochsIncreasePerFlow) {
  std::mt19937_64 rng(99);
  const GrantConfig c;
  GrantIssuer issuer(c);
  std::map<FlowId, std::uint32_t> last_epoch;
  std::uint32_t newest = 0;
  std::uint64_t seen = 0;
  TimePs t = 0;
  auto record = [&](const std::vector<Grant>& grants) {
    for (const Grant& g : grants) {
      ++seen;
      // Receiver-wide counter: strictly increasing per flow, and unique.
      EXPECT_GT(g.epoch, last_epoch[g.flow]) << "flow " << g.flow;
      EXPECT_GT(g.epoch, newest) << "epochs are unique across flows";
      newest = g.epoch;
      last_epoch[g.flow] = g.epoch;
    }
  };
  for (int k = 0; k < 2000; ++k) {
    while (issuer.next_due_ps() <= t) {
      const TimePs due_at = issuer.next_due_ps();
      record(issuer.due(due_at));
    }
    std::vector<GrantTarget> targets;
    for (FlowId f = 1; f <= 6; ++f) {
      targets.push_back({f, static_cast<double>(rng() % 50) * kGbps,
                         static_cast<std::uint8_t>(rng() % 8 == 0 ? 4 : 5)});
    }
    record(issuer.update(targets, t));
    t += static_cast<TimePs>(rng() % (40 * kUs));
  }
  EXPECT_EQ(seen, issuer.grants_issued());
  EXPECT_GT(seen, 2000u);
}

// ---------------------------------------------------------------------------
// Break before make at every instant, with random delivery delays.

struct SafetyRun {
  double worst_excess_bps = 0;  // most the rates in effect exceeded the budget by
  int immediate_checks = 0;     // updates where an increase had to go out at once
  std::uint64_t grants = 0;
};

// Random reallocations of `budget` over a fixed set of flows; each grant
// reaches its sender after a random delay in [0, control delay]; the rate
// in effect for a flow is that of the newest grant its holder accepted.
// `with_capacity`: the issuer is told the budget, as the receiver tells it,
// and about half the flows are background (their increases may be deferred).
SafetyRun run_safety(std::mt19937_64& rng, const GrantConfig& c, double budget,
                     bool with_capacity = false) {
  SafetyRun run;
  GrantIssuer issuer(c);
  const int n = 2 + static_cast<int>(rng() % 7);
  std::vector<bool> urgent(static_cast<std::size_t>(n), true);
  if (with_capacity) {
    for (std::size_t f = 0; f < urgent.size(); ++f) urgent[f] = rng() % 2 == 0;
  }
  struct Delivery {
    TimePs at;
    std::uint64_t seq;
    Grant grant;
  };
  std::vector<Delivery> deliveries;
  std::uint64_t seq = 0;
  std::map<FlowId, double> issued;  // last rate issued per flow
  TimePs last_decrease = -kTimeNever;
  auto send = [&](const std::vector<Grant>& grants, TimePs at) {
    for (const Grant& g : grants) {
      auto it = issued.find(g.flow);
      if (it != issued.end() && g.rate_bps < it->second) last_decrease = at;
      issued[g.flow] = g.rate_bps;
      const TimePs delay =
          static_cast<TimePs>(rng() % static_cast<std::uint64_t>(c.control_delay_ps + 1));
      deliveries.push_back({at + delay, seq++, g});
    }
  };
  auto flush_due = [&](TimePs until) {
    while (issuer.next_due_ps() <= until) {
      const TimePs at = issuer.next_due_ps();
      send(issuer.due(at), at);
    }
  };

  TimePs t = 0;
  const int updates = 40;
  for (int k = 0; k < updates; ++k) {
    flush_due(t);
    std::vector<GrantTarget> targets;
    std::vector<double> weight(static_cast<std::size_t>(n));
    double sum = 0;
    for (double& w : weight) {
      w = rng() % 5 == 0 ? 0.0 : std::uniform_real_distribution<double>(0, 1)(rng);
      sum += w;
    }
    const double total = budget * std::uniform_real_distribution<double>(0.5, 1.0)(rng);
    for (int f = 0; f < n; ++f) {
      const double r = sum > 0 ? total * weight[static_cast<std::size_t>(f)] / sum : 0.0;
      targets.push_back({static_cast<FlowId>(f + 1), r, 3, urgent[static_cast<std::size_t>(f)]});
    }
    const bool in_flight = last_decrease + c.control_delay_ps > t;
    const std::map<FlowId, double> before = issued;
    const std::vector<Grant> out =
        with_capacity ? issuer.update(targets, t, budget) : issuer.update(targets, t);
    send(out, t);
    bool decreased_now = false;
    for (const Grant& g : out) {
      auto it = before.find(g.flow);
      if (it != before.end() && g.rate_bps < it->second) decreased_now = true;
    }
    bool held = false;
    for (const GrantTarget& target : targets) {
      auto it = before.find(target.flow);
      if (it != before.end()) {
        const double prev = it->second;
        if (target.rate_bps <= prev) continue;  // not an increase
        if (prev > 0 && target.rate_bps - prev <= c.change_threshold * prev) continue;  // too small
      }
      const Grant* g = find_grant(out, target.flow);
      if (!target.urgent && it != before.end()) {
        // A background increase may be deferred, in part or whole.
        if (g != nullptr) {
          EXPECT_LE(g->rate_bps, target.rate_bps);
        }
        continue;
      }
      if (!in_flight && !decreased_now) {
        // No decrease in flight: every increase (or first grant) goes out at once.
        ++run.immediate_checks;
        EXPECT_NE(g, nullptr) << "increase for flow " << target.flow << " held back at " << t;
      }
      if (g != nullptr) {
        EXPECT_EQ(g->rate_bps, target.rate_bps);
      } else {
        held = true;
      }
    }
    // Held-back increases come out within one control delay of the last
    // decrease (an earlier-held one keeps its own, earlier release time).
    if (held) {
      EXPECT_TRUE(in_flight || decreased_now);
      EXPECT_GT(issuer.next_due_ps(), t);
      EXPECT_LE(issuer.next_due_ps(), last_decrease + c.control_delay_ps);
    }
    const std::uint64_t r = rng() % 4;
    t += r == 0 ? 0
                : static_cast<TimePs>(rng() % static_cast<std::uint64_t>(3 * c.control_delay_ps));
  }
  flush_due(t + 1200 * kUs);  // pending increases and a few lease refreshes

  std::stable_sort(deliveries.begin(), deliveries.end(),
                   [](const Delivery& a, const Delivery& b) { return a.at < b.at; });
  std::map<FlowId, GrantHolder> senders;
  for (std::size_t i = 0; i < deliveries.size();) {
    const TimePs at = deliveries[i].at;
    for (; i < deliveries.size() && deliveries[i].at == at; ++i) {
      senders[deliveries[i].grant.flow].accept(deliveries[i].grant, at);
    }
    double in_effect = 0;
    for (const auto& [flow, holder] : senders)
      in_effect += holder.held() ? holder.grant().rate_bps : 0.0;
    run.worst_excess_bps = std::max(run.worst_excess_bps, in_effect - budget);
  }
  run.grants = deliveries.size();
  return run;
}

TEST(GrantSafetyTest, RatesInEffectNeverExceedBudgetWithoutHysteresis) {
  std::mt19937_64 rng(0xb4b);
  GrantConfig c;
  c.change_threshold = 0.0;  // every change is sent: pure break before make
  const double budget = 97 * kGbps;
  int immediate = 0;
  for (int iter = 0; iter < 300; ++iter) {
    c.control_delay_ps = (1 + static_cast<TimePs>(rng() % 10)) * kUs;
    const SafetyRun run = run_safety(rng, c, budget);
    ASSERT_LE(run.worst_excess_bps, budget * 1e-12) << "instance " << iter;
    immediate += run.immediate_checks;
  }
  EXPECT_GT(immediate, 300);  // the "increase at once" branch was exercised
}

// Regression: break before make must hold with the default change threshold.
// A decrease smaller than theta was once not sent while another flow's
// increase went out at once, so the rates in effect exceeded the budget by up
// to theta of the suppressed flows' rates. Now any increase in an update
// makes every decrease go out first (SuppressedDecreaseLetsIncreaseOverrun is
// the minimal case).
TEST(GrantSafetyTest, RatesInEffectNeverExceedBudgetWithDefaultThreshold) {
  std::mt19937_64 rng(0xb4b);
  GrantConfig c;  // theta 0.1
  const double budget = 97 * kGbps;
  for (int iter = 0; iter < 300; ++iter) {
    const SafetyRun run = run_safety(rng, c, budget);
    ASSERT_LE(run.worst_excess_bps, budget * 1e-12) << "instance " << iter;
  }
}

// The same with the budget given to the issuer, as the receiver gives it:
// small decreases go only as far as the increases need, and background
// increases wait for free rate instead.
TEST(GrantSafetyTest, RatesInEffectNeverExceedBudgetWhenOnlyNeededDecreasesGo) {
  std::mt19937_64 rng(0x5afe);
  GrantConfig c;  // theta 0.1
  const double budget = 97 * kGbps;
  for (int iter = 0; iter < 300; ++iter) {
    const SafetyRun run = run_safety(rng, c, budget, /*with_capacity=*/true);
    ASSERT_LE(run.worst_excess_bps, budget * 1e-12) << "instance " << iter;
  }
}

// Ten flows of 9.4 and one of 5 at a budget of 100 (1 free), then the first
// flow -0.5 (5%), the nine others -0.05 (0.5%) and the last +1.5 (30%): the
// increase needs 0.5 of the cuts, so only the first flow's decrease goes,
// before the increase; the nine others keep their grants.
TEST(GrantIssuerTest, AnIncreaseSendsOnlyTheSmallDecreasesItNeeds) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  const double g = kGbps;
  std::vector<GrantTarget> targets;
  for (FlowId f = 1; f <= 10; ++f) targets.push_back({f, 9.4 * g, 3, true});
  targets.push_back({11, 5 * g, 3, true});
  EXPECT_EQ(issuer.update(targets, 0, 100 * g).size(), 11u);

  targets[0].rate_bps = 8.9 * g;
  for (std::size_t i = 1; i < 10; ++i) targets[i].rate_bps = 9.35 * g;
  targets[10].rate_bps = 6.5 * g;
  const TimePs t = 100 * kUs;
  const std::vector<Grant> now = issuer.update(targets, t, 100 * g);
  ASSERT_EQ(now.size(), 1u);
  EXPECT_EQ(now[0].flow, 1u);
  EXPECT_DOUBLE_EQ(now[0].rate_bps, 8.9 * g);
  const std::vector<Grant> later = issuer.due(t + c.control_delay_ps);
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].flow, 11u);
  EXPECT_DOUBLE_EQ(later[0].rate_bps, 6.5 * g);
}

// The same budget with every flow at a full share: ten flows of 9.4, one of
// 6, then the ten at 9.33 (-0.7%) and the last at 6.7 (+12%). An urgent increase
// makes all ten small decreases go first; a background one takes only what
// is free (6 + 0 → still 6: nothing to send) and waits for the others'
// changes to pass theta, so one flow's share moving costs no grant at all.
TEST(GrantIssuerTest, BackgroundIncreaseWaitsForFreeRateInsteadOfCuttingEveryone) {
  const GrantConfig c;
  const double g = kGbps;
  for (const bool urgent : {true, false}) {
    GrantIssuer issuer(c);
    std::vector<GrantTarget> targets;
    for (FlowId f = 1; f <= 10; ++f) targets.push_back({f, 9.4 * g, 1, urgent});
    targets.push_back({11, 6 * g, 1, urgent});
    issuer.update(targets, 0, 100 * g);
    for (std::size_t i = 0; i < 10; ++i) targets[i].rate_bps = 9.33 * g;
    targets[10].rate_bps = 6.7 * g;
    const std::vector<Grant> out = issuer.update(targets, 100 * kUs, 100 * g);
    if (urgent) {
      EXPECT_EQ(out.size(), 10u);
      for (const Grant& grant : out) EXPECT_DOUBLE_EQ(grant.rate_bps, 9.33 * g);
      ASSERT_EQ(issuer.due(100 * kUs + c.control_delay_ps).size(), 1u);
    } else {
      EXPECT_TRUE(out.empty());
      EXPECT_GE(issuer.next_due_ps(), 500 * kUs - c.refresh_margin_ps);  // leases end first
    }
  }
}

// Budget 100: {X 50, Y 45, Z 5}, then {X 45.5, Y 45, Z 9.5}. X's -9% is below
// the threshold, but Z's +90% makes it matter: X's decrease goes out at once
// and Z's increase one control delay later, never 104.5 in effect.
TEST(GrantSafetyTest, SuppressedDecreaseLetsIncreaseOverrun) {
  const GrantConfig c;
  GrantIssuer issuer(c);
  std::map<FlowId, GrantHolder> senders;
  auto deliver = [&](const std::vector<Grant>& grants, TimePs at) {
    for (const Grant& g : grants) senders[g.flow].accept(g, at);
  };
  deliver(issuer.update({{1, 50 * kGbps, 3}, {2, 45 * kGbps, 3}, {3, 5 * kGbps, 3}}, 0), 0);
  deliver(issuer.update({{1, 45.5 * kGbps, 3}, {2, 45 * kGbps, 3}, {3, 9.5 * kGbps, 3}}, 100 * kUs),
          100 * kUs);
  double in_effect = 0;
  for (const auto& [flow, holder] : senders) in_effect += holder.grant().rate_bps;
  EXPECT_LE(in_effect, 100 * kGbps);
}

}  // namespace
}  // namespace safs::core

namespace safs::core {
namespace {

// Regression: a stream of reallocations, each sending decreases, must not
// hold an increase back forever. Flows arrive every 3 us (less than the
// 5 us control delay) and each arrival lowers everyone else's rate.
TEST(GrantIssuerTest, ArrivalsEveryFewMicrosecondsDoNotStarveIncreases) {
  const GrantConfig c;  // control delay 5 us
  GrantIssuer issuer(c);
  std::map<FlowId, TimePs> first_granted;
  std::vector<GrantTarget> targets;
  TimePs t = 0;
  for (FlowId f = 1; f <= 100; ++f, t += 3 * kPsPerUs) {
    for (const Grant& g : issuer.due(t)) first_granted.emplace(g.flow, t);
    targets.push_back({f, 0, 1});
    const double share = 100e9 / static_cast<double>(targets.size());
    for (GrantTarget& target : targets) target.rate_bps = share;
    for (const Grant& g : issuer.update(targets, t, 100e9)) {
      if (g.rate_bps > 0) first_granted.emplace(g.flow, t);
    }
  }
  for (const Grant& g : issuer.due(t + c.control_delay_ps)) first_granted.emplace(g.flow, t);
  for (FlowId f = 1; f <= 100; ++f) {
    ASSERT_TRUE(first_granted.count(f)) << "flow " << f << " never granted";
    EXPECT_LE(first_granted[f] - static_cast<TimePs>(f - 1) * 3 * kPsPerUs,
              c.control_delay_ps + 3 * kPsPerUs)
        << "flow " << f;
  }
}

}  // namespace
}  // namespace safs::core
