// DCTCP's known behaviour on one bottleneck and in a receiver incast.
#include <gtest/gtest.h>

#include "support/experiments.h"

namespace safs {
namespace {

using testing::add_flow;

// The switch port that feeds host 0 (the bottleneck in every test here).
const Port& port_to_host0(Experiment& e) {
  for (const auto& port : e.network().ports()) {
    if (port->name() == "switch->host0") return *port;
  }
  throw std::logic_error("no port to host0");
}

TEST(Dctcp, TwoLongFlowsShareTheBottleneckFairlyWithQueueNearK) {
  ExperimentConfig config = testing::star(3);
  const std::uint64_t k_bytes = config.network.switches.ecn_threshold_bytes;
  add_flow(config, 1, 0, 200'000'000);
  add_flow(config, 2, 0, 200'000'000);
  Experiment e(config);

  // Measure over a steady window well after slow start, while both are active.
  const TimePs from = 2 * kPsPerMs, to = 12 * kPsPerMs;
  e.run_until(from);
  const PortStats at_from = port_to_host0(e).stats();
  const std::uint64_t d0 = e.transport().delivered_bytes(0), d1 = e.transport().delivered_bytes(1);
  e.run_until(to);
  const PortStats at_to = port_to_host0(e).stats();
  ASSERT_LT(e.transport().delivered_bytes(0), 200'000'000u) << "flow finished inside the window";

  const double window = static_cast<double>(to - from);
  const double utilisation = static_cast<double>(at_to.busy_ps - at_from.busy_ps) / window;
  const double rate0 = static_cast<double>(e.transport().delivered_bytes(0) - d0);
  const double rate1 = static_cast<double>(e.transport().delivered_bytes(1) - d1);
  const double mean_queue = (at_to.queue_byte_ps - at_from.queue_byte_ps) / window;

  EXPECT_GE(utilisation, 0.95);
  EXPECT_GE(testing::jain_fairness({rate0, rate1}), 0.98);
  EXPECT_GE(mean_queue, 0.5 * static_cast<double>(k_bytes));
  EXPECT_LE(mean_queue, 2.0 * static_cast<double>(k_bytes));
  EXPECT_EQ(at_to.drops, 0u);
}

TEST(Dctcp, SixteenToOneIncastFinishesWithinThreePercentOfIdeal) {
  const std::uint32_t mtu = 1500, header = 78;
  ExperimentConfig config = testing::star(17, mtu);
  config.header_bytes = header;
  config.network.switches.ecn_threshold_bytes = 65ull * (mtu + header);
  config.network.switches.port_buffer_bytes = 1000ull * (mtu + header);
  const std::uint64_t size = 4ull << 20;
  for (int s = 1; s <= 16; ++s) add_flow(config, s, 0, size);
  Experiment e(config);
  e.run();

  ASSERT_TRUE(e.recorder().all_complete());
  EXPECT_EQ(e.network_totals().queue_drops, 0u);

  TimePs last = 0;
  for (const FlowRecord& r : e.recorder().records()) last = std::max(last, r.finish_ps);
  // Ideal: every wire byte back to back at 100 Gbps, plus one base RTT.
  const Route data = e.network().route(1, 0, 0);
  const Route ack = e.network().route(0, 1, 0);
  const TimePs base_rtt = data.packet_latency_ps(mtu + header) + ack.packet_latency_ps(header);
  const TimePs ideal =
      serialization_ps(16 * testing::wire_bytes(size, mtu, header), 100'000'000'000) + base_rtt;
  EXPECT_GE(last, ideal) << "faster than the wire allows: accounting is wrong";
  EXPECT_LE(static_cast<double>(last), 1.03 * static_cast<double>(ideal));
}

TEST(Dctcp, MarksLessAndQueuesLessThanRenoInTheSameIncast) {
  auto run = [](const char* transport) {
    ExperimentConfig config = testing::star(9);
    config.transport = transport;
    for (int s = 1; s <= 8; ++s) add_flow(config, s, 0, 8u << 20);
    Experiment e(config);
    e.run();
    EXPECT_TRUE(e.recorder().all_complete()) << transport;
    return e.network_totals().max_switch_queue_bytes;
  };
  const std::uint64_t dctcp_queue = run("dctcp");
  const std::uint64_t reno_queue = run("reno");
  // Reno fills the buffer until it drops; DCTCP holds the queue near K.
  EXPECT_LT(dctcp_queue * 2, reno_queue);
}

}  // namespace
}  // namespace safs
