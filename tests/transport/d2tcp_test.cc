// D2TCP's known behaviour (Vamanan et al., SIGCOMM 2012): near-deadline flows
// back off less; without deadlines it is DCTCP.
#include <gtest/gtest.h>

#include <cmath>

#include "support/experiments.h"
#include "transport/window/congestion_control.h"

namespace safs {
namespace {

TEST(D2tcp, ImminenceFollowsTheFormula) {
  const D2tcpControl control(4, 3000, 0.5, 2.0);
  CcState cc;
  cc.cwnd_bytes = 100'000;
  const TimePs rtt = 10 * kPsPerUs;
  // No deadline: d = 1 (DCTCP).
  EXPECT_EQ(control.imminence(cc, {1'000'000, kTimeNever, 0, rtt}), 1.0);
  // Past the deadline: d = d_max.
  EXPECT_EQ(control.imminence(cc, {1'000'000, 5 * kPsPerUs, 10 * kPsPerUs, rtt}), 2.0);
  // Tc = B / (3/4 W) RTTs = 1e6 / 75e3 * 10 us = 133.3 us; D = 100 us: d = 1.333.
  EXPECT_NEAR(control.imminence(cc, {1'000'000, 100 * kPsPerUs, 0, rtt}), 4.0 / 3.0, 1e-9);
  // Far deadline: clamped at d_min; near one: clamped at d_max.
  EXPECT_EQ(control.imminence(cc, {1'000'000, 100 * kPsPerMs, 0, rtt}), 0.5);
  EXPECT_EQ(control.imminence(cc, {1'000'000, kPsPerUs, 0, rtt}), 2.0);
  // Zero window and zero RTT are guarded, not divided by.
  cc.cwnd_bytes = 0;
  EXPECT_TRUE(std::isfinite(control.imminence(cc, {1'000, 100 * kPsPerUs, 0, 0})));
}

TEST(D2tcp, NearDeadlinesCutLessFarDeadlinesMore) {
  const D2tcpControl d2tcp(4, 3000, 0.5, 2.0);
  const DctcpControl dctcp(4, 3000);
  CcState cc;
  cc.cwnd_bytes = 100'000;
  cc.alpha = kAlphaOne / 2;  // alpha = 0.5: DCTCP cuts to 75%
  const TimePs rtt = 10 * kPsPerUs;
  const FlowProgress none{1'000'000, kTimeNever, 0, rtt};
  const FlowProgress near{1'000'000, 10 * kPsPerUs, 0, rtt};  // d = 2: p = 0.25
  const FlowProgress far{1'000'000, 100 * kPsPerMs, 0, rtt};  // d = 0.5: p = 0.707
  EXPECT_EQ(d2tcp.cwnd_after_echo(cc, none), dctcp.cwnd_after_echo(cc, none));
  EXPECT_EQ(dctcp.cwnd_after_echo(cc, none), 75'000u);
  EXPECT_NEAR(static_cast<double>(d2tcp.cwnd_after_echo(cc, near)), 87'500, 100);
  EXPECT_NEAR(static_cast<double>(d2tcp.cwnd_after_echo(cc, far)), 100'000 * (1 - 0.7071 / 2), 100);
  EXPECT_EQ(cc.alpha, kAlphaOne / 2) << "alpha itself must not change";
}

// Two equal 20 MB flows share one bottleneck; flow 0 must finish by 3.0 ms,
// which needs more than its fair share (both finish at about 3.26 ms when
// shared fairly).
ExperimentConfig two_flows(const char* transport) {
  ExperimentConfig config = testing::star(3);
  config.transport = transport;
  testing::add_flow(config, 1, 0, 20'000'000);
  testing::listed_flows(config).back().deadline_ps = 3 * kPsPerMs;
  testing::add_flow(config, 2, 0, 20'000'000);
  return config;
}

TEST(D2tcp, TightDeadlineFlowFinishesFirstAndMeetsItWhereDctcpMisses) {
  Experiment d2(two_flows("d2tcp"));
  d2.run();
  Experiment dc(two_flows("dctcp"));
  dc.run();
  const auto& d2_flows = d2.recorder().records();
  const auto& dc_flows = dc.recorder().records();
  ASSERT_TRUE(d2.recorder().all_complete());
  ASSERT_TRUE(dc.recorder().all_complete());
  EXPECT_TRUE(d2_flows[0].met_deadline());
  EXPECT_LT(d2_flows[0].finish_ps, d2_flows[1].finish_ps);
  EXPECT_FALSE(dc_flows[0].met_deadline());
}

TEST(D2tcp, WithoutDeadlinesItIsDctcp) {
  auto run = [](const char* transport) {
    ExperimentConfig config = testing::star(9);
    config.transport = transport;
    config.network.link_loss_rate = 0.001;  // loss recovery must match too
    for (int s = 1; s <= 8; ++s) testing::add_flow(config, s, 0, 1'000'000u * s, s * kPsPerUs);
    Experiment e(config);
    e.run();
    std::vector<TimePs> finish;
    for (const FlowRecord& r : e.recorder().records()) finish.push_back(r.finish_ps);
    return finish;
  };
  EXPECT_EQ(run("d2tcp"), run("dctcp"));
}

}  // namespace
}  // namespace safs
