// Urgent flows from several senders (several identities) into one receiver:
// while their deadlines are all feasible, the receiver serves them in
// deadline order, and the per-identity urgent quota (a guard against claims
// that compete) holds none of them back. A test that fails if the quota
// judged grants alone: EDF at line rate gives the earliest flow the whole
// downlink, above its sender's third, and the quota once turned the three
// into background flows sharing it equally.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

#include "runtime/clock.h"
#include "runtime/endpoint.h"
#include "runtime/test_support.h"

namespace safs::runtime {
namespace {

using testing::kMbps;
using testing::kMs;
using testing::kSecond;
using testing::LoopThread;
using testing::random_bytes;

constexpr double kDownlinkBps = 100 * kMbps;  // 12.5 MB/s
// Seconds, not tenths: the just-in-time flow finishes at its deadline by
// design, and at 2 MB in 0.5 s a stall of some tens of milliseconds on a
// loaded machine (the senders share one thread) made the urgent set look
// infeasible for a moment, 2 runs in 25 beside another busy process.
constexpr std::size_t kBytes = 6 << 20;  // 503 ms at the downlink

struct Finish {
  std::array<std::int64_t, 3> fct_ns{};
  EndpointStats receiver;
};

// Three senders, each one flow of kBytes; slacks 1.5, 3 and 4.5 s: feasible
// (the three need 1.5 s in all).
Finish three_senders(bool urgent_first) {
  EndpointConfig receiver_config = testing::config_at("127.0.0.1", kDownlinkBps, nullptr);
  receiver_config.scheduler.allocator.urgent_first = urgent_first;
  Endpoint receiver(receiver_config);
  LoopThread loop(receiver);
  std::vector<std::unique_ptr<Endpoint>> senders;
  std::vector<FlowHandle> flows;
  const auto payload = random_bytes(kBytes, 5);
  const std::int64_t start = monotonic_ns();
  for (int i = 0; i < 3; ++i) {
    senders.push_back(
        std::make_unique<Endpoint>(testing::config_at("127.0.0.1", kDownlinkBps, nullptr)));
    flows.push_back(senders.back()->send(receiver.address(), payload,
                                         FlowHint::urgent_within((i + 1) * 1500 * kMs, i + 1)));
  }
  Finish finish;
  std::size_t done = 0;
  while (done < 3 && monotonic_ns() - start < 20 * kSecond) {
    done = 0;
    for (std::size_t i = 0; i < 3; ++i) {
      senders[i]->progress(kMs / 3);
      const FlowState state = senders[i]->test(flows[i]).state;
      EXPECT_NE(state, FlowState::kFailed);
      if (state == FlowState::kPending) continue;
      ++done;
      if (finish.fct_ns[i] == 0) finish.fct_ns[i] = monotonic_ns() - start;
    }
  }
  EXPECT_EQ(done, 3u);
  finish.receiver = loop.stats();
  return finish;
}

TEST(UrgentSenders, EarliestDeadlineFirstAtLineRateAcrossIdentities) {
  const Finish f = three_senders(true);
  // In deadline order, one after another: the first in about a third of
  // the last's time (shared equally, the three finish together).
  EXPECT_LT(f.fct_ns[0], f.fct_ns[1]);
  EXPECT_LT(f.fct_ns[1], f.fct_ns[2]);
  EXPECT_LT(f.fct_ns[0], f.fct_ns[2] * 6 / 10);
  EXPECT_EQ(f.receiver.quota_demotions, 0u);
  EXPECT_EQ(f.receiver.deadline_misses, 0u);
}

TEST(UrgentSenders, JustInTimeHoldsNoFeasibleClaimBack) {
  // Just in time the earliest flow needs 6 MB in 1.5 s, more than its
  // sender's third of the downlink: still its own claim, and feasible.
  const Finish f = three_senders(false);
  EXPECT_EQ(f.receiver.quota_demotions, 0u);
  EXPECT_EQ(f.receiver.deadline_misses, 0u);
}

}  // namespace
}  // namespace safs::runtime
