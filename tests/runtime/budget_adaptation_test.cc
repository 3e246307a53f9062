// The receiver's responses to a competing flow (ShortfallResponse): in a
// network namespace of its own (a forked child unshares one), loopback is
// given an htb bottleneck and an unmanaged bulk TCP flow shares it with SAFS
// flows. With budget adaptation the receiver must lower the budget it
// allocates from (but not below its floor), and the flow arrive whole; with
// EDF when short, three senders' urgent flows must find the receiver
// serving them EDF at line rate, earliest first. Skips without root,
// namespaces or tc; bounded by an alarm.
#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

#include "runtime/bottleneck_namespace.h"
#include "runtime/clock.h"
#include "runtime/endpoint.h"
#include "runtime/test_support.h"

namespace safs::runtime::testing {
namespace {

constexpr std::size_t kFlowBytes = 30'000'000;

// Runs in the child. Exit 0: passed.
int lowered_budget() {
  if (const int skip = enter_bottlenecked_namespace(); skip != 0) return skip;
  BulkFlow bulk;
  if (!bulk.start()) {
    std::fprintf(stderr, "FAIL: the bulk flow did not start\n");
    return 1;
  }
  usleep(300'000);  // the bulk flow fills the bottleneck first
  EndpointConfig config = config_at("127.0.0.1", kLinkBps, nullptr);
  config.shortfall_response.lower_budget = true;  // off by default
  Endpoint receiver(config);
  Endpoint sender(config_at("127.0.0.1", 1e10, nullptr));
  LoopThread receiver_loop(receiver);
  const std::vector<std::byte> payload = random_bytes(kFlowBytes, 7);
  const FlowHandle flow = sender.send(receiver.address(), payload, FlowHint::background(1));
  const FlowStatus status = sender.wait(flow, 20 * kSecond);
  usleep(100'000);  // the receiver's last frames
  const EndpointStats stats = receiver_loop.stats();
  receiver_loop.stop();
  std::fprintf(stderr, "flow state %d, min budget %.0f Mbit/s of %.0f, %llu budget changes\n",
               static_cast<int>(status.state), stats.min_budget_bps / 1e6, kLinkBps / 1e6,
               static_cast<unsigned long long>(stats.budget_changes));
  if (status.state != FlowState::kDone) return 1;
  // The bulk flow takes a large part of 200 Mbit/s: the budget comes down...
  if (!(stats.min_budget_bps < 0.85 * kLinkBps) || stats.budget_changes == 0) return 1;
  // ...but never below its floor (a tenth of the link).
  if (!(stats.min_budget_bps >= 0.1 * kLinkBps - 1)) return 1;
  return 0;
}

// Three senders, 4 MB each with slacks of 0.8, 1.6 and 2.4 s, next to the
// bulk flow. Runs in the child. Exit 0: passed.
int edf_when_short() {
  if (const int skip = enter_bottlenecked_namespace(); skip != 0) return skip;
  BulkFlow bulk;
  if (!bulk.start()) {
    std::fprintf(stderr, "FAIL: the bulk flow did not start\n");
    return 1;
  }
  usleep(300'000);
  EndpointConfig config = config_at("127.0.0.1", kLinkBps, nullptr);
  // ShortfallResponse::urgent_first is on by default.
  Endpoint receiver(config);
  LoopThread receiver_loop(receiver);
  const std::vector<std::byte> payload = random_bytes(4'000'000, 9);
  std::vector<std::unique_ptr<Endpoint>> senders;
  std::vector<FlowHandle> flows;
  for (int i = 0; i < 3; ++i) {
    senders.push_back(std::make_unique<Endpoint>(config_at("127.0.0.1", 1e10, nullptr)));
    flows.push_back(senders.back()->send(receiver.address(), payload,
                                         FlowHint::urgent_within((i + 1) * 800 * kMs, i + 1)));
  }
  std::vector<std::int64_t> done_ns(3, 0);
  const std::int64_t start = monotonic_ns();
  int pending = 3;
  while (pending > 0 && monotonic_ns() - start < 20 * kSecond) {
    pending = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      senders[i]->progress(kMs / 3);
      const FlowState state = senders[i]->test(flows[i]).state;
      if (state == FlowState::kFailed) {
        std::fprintf(stderr, "FAIL: flow %zu failed\n", i + 1);
        return 1;
      }
      if (state == FlowState::kPending) ++pending;
      if (state == FlowState::kDone && done_ns[i] == 0) done_ns[i] = monotonic_ns() - start;
    }
  }
  usleep(100'000);
  const EndpointStats stats = receiver_loop.stats();
  receiver_loop.stop();
  std::fprintf(stderr, "finished at %lld / %lld / %lld ms, %llu shortfall episodes\n",
               static_cast<long long>(done_ns[0] / kMs), static_cast<long long>(done_ns[1] / kMs),
               static_cast<long long>(done_ns[2] / kMs),
               static_cast<unsigned long long>(stats.shortfall_episodes));
  if (pending > 0 || stats.incoming_completed != 3) return 1;
  if (stats.shortfall_episodes == 0) return 1;  // the bulk flow took its share
  // Earliest deadline first: the first flow is not left to share.
  if (!(done_ns[0] < done_ns[1] && done_ns[0] < done_ns[2])) return 1;
  return 0;
}

TEST(BudgetAdaptation, CompetingBulkFlowLowersTheBudgetNotBelowItsFloor) {
  run_child(lowered_budget);
}

TEST(ShortfallResponse, CompetingBulkFlowTurnsUrgentServiceToEdfAtLineRate) {
  run_child(edf_when_short);
}

}  // namespace
}  // namespace safs::runtime::testing
