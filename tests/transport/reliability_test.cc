// Reliable delivery: every byte exactly once, whatever the network loses.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/experiments.h"
#include "transport/registry.h"

namespace safs {
namespace {

class LossyDelivery : public ::testing::TestWithParam<std::string> {};

std::vector<std::string> every_transport() {
  std::vector<std::string> names;
  for (const TransportInfo& t : all_transports()) names.emplace_back(t.name);
  return names;
}

TEST_P(LossyDelivery, EveryByteArrivesExactlyOnceUnderOnePercentLoss) {
  ExperimentConfig config = testing::star(5, 1500);
  config.transport = GetParam();
  config.network.link_loss_rate = 0.01;  // on every link, data and ACKs alike
  config.seed = 7;
  const std::uint64_t sizes[] = {1, 1499, 1500, 1501, 3'000'000, 5'000'000};
  int i = 0;
  for (const std::uint64_t size : sizes) {
    const int src = 1 + i % 4;
    testing::add_flow(config, src, 0, size, i * 10 * kPsPerUs);
    if (i % 2 == 1) {  // urgent with a deadline: the priority and deadline paths too
      FlowSpec& flow = testing::listed_flows(config).back();
      flow.flow_class = FlowClass::kUrgent;
      flow.deadline_ps = flow.start_ps + 2 * kPsPerMs;
    }
    ++i;
  }
  Experiment e(config);
  e.run();

  const NetworkTotals net = e.network_totals();
  const TransportStats stats = e.transport().stats();
  EXPECT_GT(net.wire_losses, 100u) << "the test must actually lose packets";
  EXPECT_GT(stats.retransmissions, 0u);
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_TRUE(r.complete()) << "flow " << r.spec.id;
    EXPECT_EQ(e.transport().delivered_bytes(r.spec.id), r.spec.size_bytes) << "flow " << r.spec.id;
  }
}

INSTANTIATE_TEST_SUITE_P(AllTransports, LossyDelivery, ::testing::ValuesIn(every_transport()));

}  // namespace
}  // namespace safs
