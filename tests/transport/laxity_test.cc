// dctcp-llf, least laxity first over strict priorities: the ladder of
// laxity thresholds, a flow climbing it as its slack shrinks, and two urgent
// flows served least laxity first where one urgent class shares the link.
#include <gtest/gtest.h>

#include <vector>

#include "support/experiments.h"
#include "transport/window/laxity_transport.h"

namespace safs {
namespace {

constexpr TimePs kRtt = 10 * kPsPerUs;

// Default ladder under level 6: thresholds 1, 4, 16, 64, 256 RTTs.
TEST(LaxityLevels, EachThresholdPassedIsOneLevelLower) {
  const LaxityLevels ladder;
  auto level = [&](double rtts) {
    return laxity_level(ladder, 6, static_cast<TimePs>(rtts * kRtt), kRtt);
  };
  EXPECT_EQ(level(-3), 6) << "late: top";
  EXPECT_EQ(level(0.99), 6);
  EXPECT_EQ(level(1), 5);
  EXPECT_EQ(level(3.99), 5);
  EXPECT_EQ(level(4), 4);
  EXPECT_EQ(level(16), 3);
  EXPECT_EQ(level(64), 2);
  EXPECT_EQ(level(255), 2);
  EXPECT_EQ(level(256), 1);
  EXPECT_EQ(level(1e6), 1) << "never below the lowest urgent level";
  EXPECT_EQ(laxity_level(ladder, 6, kTimeNever, kRtt), 1) << "no deadline: lowest";
  const LaxityLevels two{.levels = 2, .first_threshold_rtts = 2, .threshold_growth = 10};
  EXPECT_EQ(laxity_level(two, 7, 1 * kRtt, kRtt), 7);
  EXPECT_EQ(laxity_level(two, 7, 2 * kRtt, kRtt), 6);
  EXPECT_EQ(laxity_level(two, 7, 1000 * kRtt, kRtt), 6);
}

// Two 4 MB urgent flows into one receiver: X with a tight deadline (alone it
// takes 340 us), Y with enough slack to finish after X (both take 660 us).
// Served together they finish at once, after X's deadline. Y starts with
// about 100 RTTs of laxity, X with about 25.
struct TwoUrgentFlows {
  std::vector<FlowRecord> records;
  std::vector<std::uint8_t> y_levels;  // Y's level every 20 us while X runs
  std::uint8_t x_first_level = 0;
};

TwoUrgentFlows tight_and_slack(const char* transport) {
  ExperimentConfig config = testing::star(3);
  config.transport = transport;
  for (const int src : {1, 2}) {
    testing::add_flow(config, src, 0, 4'000'000);
    testing::listed_flows(config).back().flow_class = FlowClass::kUrgent;
  }
  testing::listed_flows(config)[0].deadline_ps = 450 * kPsPerUs;  // X
  testing::listed_flows(config)[1].deadline_ps = 800 * kPsPerUs;  // Y
  Experiment e(config);
  TwoUrgentFlows out;
  auto* llf = dynamic_cast<LaxityTransport*>(&e.mutable_transport());
  for (TimePs t = 1 * kPsPerUs; t < 320 * kPsPerUs; t += 20 * kPsPerUs) {
    e.run_until(t);
    if (llf == nullptr) continue;
    if (out.y_levels.empty()) out.x_first_level = llf->send_level(0);
    out.y_levels.push_back(llf->send_level(1));
  }
  e.run_until(config.stop_ps);
  EXPECT_TRUE(e.recorder().all_complete()) << transport;
  out.records = e.recorder().records();
  return out;
}

TEST(LaxityTransport, ServesTheLeastLaxityFirstAndPromotesTheWaitingFlow) {
  const TwoUrgentFlows llf = tight_and_slack("dctcp-llf");
  const FlowRecord& x = llf.records[0];
  const FlowRecord& y = llf.records[1];
  EXPECT_LE(x.finish_ps, x.spec.deadline_ps) << "X at " << ps_to_us(x.finish_ps) << " us";
  EXPECT_LE(y.finish_ps, y.spec.deadline_ps) << "Y at " << ps_to_us(y.finish_ps) << " us";
  EXPECT_LT(x.finish_ps, y.finish_ps);
  // Y starts below X and climbs while it waits.
  ASSERT_FALSE(llf.y_levels.empty());
  EXPECT_LT(llf.y_levels.front(), llf.x_first_level);
  EXPECT_GT(llf.y_levels.back(), llf.y_levels.front());
  for (std::size_t i = 1; i < llf.y_levels.size(); ++i) {
    EXPECT_GE(llf.y_levels[i], llf.y_levels[i - 1]) << "sample " << i;
  }

  // One urgent class: the two share the link and X misses.
  const TwoUrgentFlows one_class = tight_and_slack("dctcp-prio");
  EXPECT_GT(one_class.records[0].finish_ps, one_class.records[0].spec.deadline_ps);
}

// Background stays at 0; an urgent flow without a deadline takes the lowest
// urgent level, still above background.
TEST(LaxityTransport, BackgroundAtZeroUrgentWithoutDeadlineAtTheLowestUrgentLevel) {
  ExperimentConfig config = testing::star(3);
  config.transport = "dctcp-llf";
  testing::add_flow(config, 1, 0, 1'000'000);
  testing::add_flow(config, 2, 0, 1'000'000);
  testing::listed_flows(config).back().flow_class = FlowClass::kUrgent;
  Experiment e(config);
  e.run_until(5 * kPsPerUs);
  const auto& llf = dynamic_cast<const LaxityTransport&>(e.transport());
  EXPECT_EQ(llf.send_level(0), 0);
  EXPECT_EQ(llf.send_level(1), 1);
}

// More levels than fit above background is an error naming the key.
TEST(LaxityTransport, LevelsReachingBackgroundAreRejected) {
  ExperimentConfig config = testing::star(2);
  config.transport = "dctcp-llf";
  config.transport_params["urgent_priority"] = 3;
  testing::add_flow(config, 1, 0, 1000);
  try {
    Experiment e(config);
    FAIL() << "expected an error";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("transport.dctcp-llf.laxity_levels"),
              std::string::npos)
        << error.what();
  }
}

}  // namespace
}  // namespace safs
