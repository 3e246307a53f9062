// Coordinated senders: grants and uplink reports settle. Receivers grant
// independently (ReceiverScheduler), so a sender serving several receivers can
// be granted more than its uplink carries; it reports what each flow can
// really get (uplink_shares, decide_report), which moves its receivers'
// allocations, which moves other senders' shares. The tests below run that
// loop on random one-to-many and many-to-many patterns, with the policy's own
// code on both sides and a fluid model of the data between them, and check
// that it goes quiet within a bounded number of control delays, that no
// flow's grant or report changes more than a few times, and that neither a
// receiver's downlink nor a sender's uplink is ever asked for more than it
// carries in what is actually sent.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

#include "core/receiver_scheduler.h"
#include "core/sender_share.h"
#include "core/uplink_report.h"

namespace safs::core {
namespace {

constexpr double kLinkBps = 100e9;
// One round is one control delay: a grant or report sent in a round arrives
// in the next.
constexpr TimePs kRoundPs = GrantConfig{}.control_delay_ps;
// Rounds simulated: 2 ms, four lease lengths.
constexpr int kRounds = 400;
// Settled: this many rounds (100 us, two report horizons) without a change.
constexpr int kQuietRounds = 20;

struct PatternFlow {
  FlowId id = 0;
  std::uint32_t sender = 0;
  std::uint32_t receiver = 0;
  bool urgent = false;
  std::uint64_t size_bytes = 0;
  TimePs no_bubble_ps = kTimeNever;
};

struct Pattern {
  std::uint32_t hosts = 0;
  std::vector<PatternFlow> flows;
};

// What a run of the control loop did. A round "changes" when a grant moves a rate or a priority, or
// a report goes.
struct Settling {
  int last_change_round = -1;     // last round that changed anything
  int settled_round = -1;         // first round followed by kQuietRounds without a change
  int most_changes_per_flow = 0;  // rate-changing grants plus reports, the busiest flow
  std::uint64_t reports = 0;
  double worst_uplink_excess_bps = 0;  // sent beyond an uplink (must stay 0)
  double worst_downlink_excess = 0;    // arrived beyond a downlink, as a fraction of it
};

// Runs the control loop: each round, reports sent last round reach their
// receivers, receivers reallocate and grant, grants sent last round reach
// their senders, senders share their uplinks, send at what they can achieve
// and report. Data moves as a fluid at each flow's achievable rate.
Settling settle(const Pattern& pattern, const UplinkShareOptions& share_options,
                const UplinkReportConfig& report_config) {
  const std::size_t n = pattern.flows.size();
  ReceiverConfig receiver_config;
  receiver_config.allocator.link_bps = kLinkBps;
  std::vector<ReceiverScheduler> receivers(pattern.hosts, ReceiverScheduler(receiver_config));
  std::vector<double> granted_bps(n, 0);      // at the sender, in force
  std::vector<double> last_grant_bps(n, -1);  // last rate its receiver sent
  std::vector<std::uint8_t> last_priority(n, 0);
  std::vector<UplinkReport> reports(n);
  std::vector<double> remaining(n);
  std::vector<int> changes(n, 0);
  std::vector<Grant> grants_in_flight;
  std::vector<std::pair<std::size_t, double>> reports_in_flight;
  for (std::size_t i = 0; i < n; ++i) {
    const PatternFlow& f = pattern.flows[i];
    SemanticFlow flow;
    flow.id = f.id;
    flow.sender = f.sender;
    flow.size_bytes = f.size_bytes;
    flow.remaining_bytes = f.size_bytes;
    flow.no_bubble_ps = f.no_bubble_ps;
    flow.urgency = f.urgent ? Urgency::kUrgent : Urgency::kBackground;
    receivers[f.receiver].add_flow(flow);
    remaining[i] = static_cast<double>(f.size_bytes);
  }
  Settling out;
  std::vector<std::vector<std::size_t>> by_sender(pattern.hosts);
  for (std::size_t i = 0; i < n; ++i) by_sender[pattern.flows[i].sender].push_back(i);
  std::vector<SenderFlow> sender_flows;
  std::vector<std::size_t> order;
  std::vector<double> available;
  std::vector<TimePs> waits;
  for (int round = 0; round < kRounds; ++round) {
    const TimePs now = static_cast<TimePs>(round) * kRoundPs;
    bool changed = false;
    for (const auto& [i, rate] : reports_in_flight) {
      receivers[pattern.flows[i].receiver].set_sender_cap(pattern.flows[i].id, rate);
    }
    reports_in_flight.clear();
    for (const Grant& g : grants_in_flight) granted_bps[g.flow] = g.rate_bps;
    grants_in_flight.clear();
    for (ReceiverScheduler& receiver : receivers) {
      if (!receiver.has_changes() && receiver.next_poll_ps() > now) continue;
      for (const Grant& g : receiver.poll(now)) {
        const auto i = static_cast<std::size_t>(g.flow);
        if (g.rate_bps != last_grant_bps[i] || g.priority != last_priority[i]) {
          changed = true;
          ++changes[i];
        }
        last_grant_bps[i] = g.rate_bps;
        last_priority[i] = g.priority;
        grants_in_flight.push_back(g);
      }
    }
    std::vector<double> arriving_bps(pattern.hosts, 0);
    for (std::uint32_t host = 0; host < pattern.hosts; ++host) {
      const std::vector<std::size_t>& mine = by_sender[host];
      sender_flows.clear();
      for (const std::size_t i : mine) {
        const PatternFlow& f = pattern.flows[i];
        const TimePs remaining_ps = transfer_ps(remaining[i], kLinkBps);
        const TimePs slack = f.urgent ? f.no_bubble_ps - now - remaining_ps : remaining_ps;
        sender_flows.push_back({f.id, granted_bps[i], f.urgent, slack,
                                static_cast<std::uint64_t>(remaining[i]), f.no_bubble_ps});
      }
      uplink_shares(sender_flows, kLinkBps, order, available, waits, share_options);
      double uplink_used = 0;
      for (std::size_t k = 0; k < mine.size(); ++k) {
        const std::size_t i = mine[k];
        // As the simulated sender paces it: its grant, or what the uplink leaves it.
        const double limit = available[k] >= kLinkBps ? kNoUplinkLimit : available[k];
        const double sent_bps = std::min(granted_bps[i], limit);
        uplink_used += sent_bps;
        arriving_bps[pattern.flows[i].receiver] += sent_bps;
        remaining[i] = std::max(0.0, remaining[i] - sent_bps / 8 * ps_to_sec(kRoundPs));
        receivers[pattern.flows[i].receiver].update_remaining(
            pattern.flows[i].id, static_cast<std::uint64_t>(remaining[i]));
        const ReportDecision decision = decide_report(reports[i], limit, granted_bps[i], waits[k],
                                                      kLinkBps, report_config, now);
        if (decision.action == ReportDecision::Action::kSend) {
          note_sent(reports[i], decision.rate_bps, now, report_config);
          reports_in_flight.emplace_back(i, decision.rate_bps);
          changed = true;
          ++changes[i];
          ++out.reports;
        }
      }
      out.worst_uplink_excess_bps = std::max(out.worst_uplink_excess_bps, uplink_used - kLinkBps);
    }
    for (const double bps : arriving_bps) {
      out.worst_downlink_excess = std::max(out.worst_downlink_excess, bps / kLinkBps - 1);
    }
    if (changed) out.last_change_round = round;
    if (out.settled_round < 0 && round - out.last_change_round >= kQuietRounds) {
      out.settled_round = out.last_change_round + 1;
    }
  }
  out.most_changes_per_flow = *std::max_element(changes.begin(), changes.end());
  return out;
}

// Sizes long enough that no flow ends within the run (2 ms at 100 Gbit/s is
// 25 MB): what is measured is the loop settling, not flows leaving.
std::uint64_t long_flow_bytes(std::mt19937_64& rng) { return 40'000'000 + rng() % 160'000'000; }

// Urgent flows' no-bubble rates: 5-60% of a link each at first, then scaled
// so that no host's uplink or downlink owes more than 80% of its rate to
// urgent flows. The urgent set is feasible everywhere: a flow that falls
// behind would raise its demand, and grants would move for that reason
// alone.
void set_feasible_timestamps(Pattern& p, std::mt19937_64& rng) {
  std::vector<double> share(p.flows.size(), 0);
  std::vector<double> out_total(p.hosts, 0);
  std::vector<double> in_total(p.hosts, 0);
  for (std::size_t i = 0; i < p.flows.size(); ++i) {
    if (!p.flows[i].urgent) continue;
    share[i] = 0.05 + 0.55 * static_cast<double>(rng() % 1000) / 1000;
    out_total[p.flows[i].sender] += share[i];
    in_total[p.flows[i].receiver] += share[i];
  }
  for (std::size_t i = 0; i < p.flows.size(); ++i) {
    PatternFlow& f = p.flows[i];
    if (!f.urgent) continue;
    const double scale = std::min({1.0, 0.8 / out_total[f.sender], 0.8 / in_total[f.receiver]});
    f.no_bubble_ps = transfer_ps(static_cast<double>(f.size_bytes), scale * share[i] * kLinkBps);
  }
}

// An FFN host's combine: host 0 sends an urgent flow to each of `fanout`
// receivers, and each receiver also takes background from one of four other
// senders (each of which serves several receivers).
Pattern one_to_many(std::mt19937_64& rng, std::uint32_t fanout) {
  Pattern p;
  p.hosts = 1 + fanout + 4;
  FlowId id = 0;
  for (std::uint32_t r = 1; r <= fanout; ++r) {
    const std::uint64_t bytes = long_flow_bytes(rng);
    p.flows.push_back({id++, 0, r, true, bytes, kTimeNever});
    const auto other = static_cast<std::uint32_t>(1 + fanout + rng() % 4);
    p.flows.push_back({id++, other, r, false, long_flow_bytes(rng), kTimeNever});
  }
  set_feasible_timestamps(p, rng);
  return p;
}

// Every host sends and receives: 2-6 flows each to random other hosts,
// two in five urgent.
Pattern many_to_many(std::mt19937_64& rng, std::uint32_t hosts) {
  Pattern p;
  p.hosts = hosts;
  FlowId id = 0;
  for (std::uint32_t s = 0; s < hosts; ++s) {
    const int count = 2 + static_cast<int>(rng() % 5);
    for (int k = 0; k < count; ++k) {
      auto r = static_cast<std::uint32_t>(rng() % (hosts - 1));
      if (r >= s) ++r;
      const bool urgent = rng() % 5 < 2;
      const std::uint64_t bytes = long_flow_bytes(rng);
      p.flows.push_back({id++, s, r, urgent, bytes, kTimeNever});
    }
  }
  set_feasible_timestamps(p, rng);
  return p;
}

struct Worst {
  int settled_round = -1;  // kRounds: some pattern never settled
  int last_change_round = -1;
  int most_changes_per_flow = 0;
  double reports_per_flow = 0;
  double uplink_excess_bps = 0;
  double downlink_excess = 0;
};

template <typename MakePattern>
Worst worst_over(int patterns, const UplinkShareOptions& options, const UplinkReportConfig& config,
                 MakePattern make) {
  Worst worst;
  std::mt19937_64 rng(2026);
  for (int k = 0; k < patterns; ++k) {
    const Pattern p = make(rng);
    const Settling s = settle(p, options, config);
    worst.last_change_round = std::max(worst.last_change_round, s.last_change_round);
    worst.settled_round =
        std::max(worst.settled_round, s.settled_round < 0 ? kRounds : s.settled_round);
    worst.most_changes_per_flow = std::max(worst.most_changes_per_flow, s.most_changes_per_flow);
    worst.reports_per_flow =
        std::max(worst.reports_per_flow,
                 static_cast<double>(s.reports) / static_cast<double>(p.flows.size()));
    worst.uplink_excess_bps = std::max(worst.uplink_excess_bps, s.worst_uplink_excess_bps);
    worst.downlink_excess = std::max(worst.downlink_excess, s.worst_downlink_excess);
  }
  return worst;
}

void print(const char* what, const Worst& w) {
  std::printf(
      "%s: settled by round %d, last change in round %d (%.0f us), at most %d changes per flow, "
      "%.2f reports per flow, uplink excess %.0f bps, downlink excess %.4f\n",
      what, w.settled_round, w.last_change_round, ps_to_sec(w.last_change_round * kRoundPs) * 1e6,
      w.most_changes_per_flow, w.reports_per_flow, w.uplink_excess_bps, w.downlink_excess);
}

Pattern random_one_to_many(std::mt19937_64& rng) {
  return one_to_many(rng, 2 + static_cast<std::uint32_t>(rng() % 15));
}
Pattern random_many_to_many(std::mt19937_64& rng) {
  return many_to_many(rng, 4 + static_cast<std::uint32_t>(rng() % 13));
}

// Both rules (core::UplinkShareOptions::urgent_by_deadline,
// core::UplinkReportConfig::keep_cap; transport.safs.uplink_by_deadline and
// report_keeps_cap). Measured over the 100 patterns of each family: settled
// by round 17 (85 us) one-to-many and 61 (305 us) many-to-many, at most 6 and
// 13 changes to the busiest flow in 2 ms (later ones follow demands that move
// as flows drain), 0.94 and 1.37 reports per flow.
UplinkShareOptions by_deadline() { return {.urgent_by_deadline = true}; }
UplinkReportConfig keeping_cap() {
  UplinkReportConfig config;
  config.keep_cap = true;
  return config;
}

// Sent beyond an uplink or arrived beyond a downlink: rounding only.
void expect_safe(const Worst& w) {
  EXPECT_LE(w.uplink_excess_bps, 1e-3);
  EXPECT_LE(w.downlink_excess, 1e-9);
}

// Bounds a little above what was measured (the comment above).
struct SettlingBound {
  int settled_round = 0;
  int changes_per_flow = 0;
  double reports_per_flow = 0;
};

void expect_coordinated_settle(const char* family, Pattern (*make)(std::mt19937_64&),
                               const SettlingBound& bound) {
  const Worst w = worst_over(100, by_deadline(), keeping_cap(), make);
  print(family, w);
  EXPECT_LE(w.settled_round, bound.settled_round);
  EXPECT_LE(w.most_changes_per_flow, bound.changes_per_flow);
  EXPECT_LE(w.reports_per_flow, bound.reports_per_flow);
  expect_safe(w);
}

TEST(UplinkConvergence, CoordinatedSendersSettleOneToMany) {
  expect_coordinated_settle("one-to-many, coordinated", random_one_to_many, {25, 8, 1.5});
}

TEST(UplinkConvergence, CoordinatedSendersSettleManyToMany) {
  expect_coordinated_settle("many-to-many, coordinated", random_many_to_many, {80, 16, 2});
}

// The defaults (least slack first, "no limit" once a limit lifts) never
// settle on some patterns of either family: measured, 64 and 107 changes to
// the busiest flow in 2 ms, 10.4 and 8.8 reports per flow. Least slack first
// swaps two flows as one drains and the other waits; "no limit" has a
// receiver grant a flow its whole share, which the uplink then limits again.
// Each rule alone fixes one family only.
TEST(UplinkConvergence, EachRuleIsNeeded) {
  const UplinkReportConfig defaults;
  const Worst neither_one = worst_over(100, {}, defaults, random_one_to_many);
  const Worst neither_many = worst_over(100, {}, defaults, random_many_to_many);
  const Worst order_only = worst_over(100, by_deadline(), defaults, random_many_to_many);
  const Worst cap_only = worst_over(100, {}, keeping_cap(), random_one_to_many);
  print("one-to-many, defaults", neither_one);
  print("many-to-many, defaults", neither_many);
  print("many-to-many, timestamp order only", order_only);
  print("one-to-many, kept caps only", cap_only);
  for (const Worst* w : {&neither_one, &neither_many, &order_only, &cap_only}) {
    EXPECT_EQ(w->settled_round, kRounds);
    EXPECT_GT(w->most_changes_per_flow, 30);
    expect_safe(*w);
  }
}

}  // namespace
}  // namespace safs::core
