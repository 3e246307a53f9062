// Memory follows what is live: every transport frees a flow's state once
// both its ends are done and nothing in the network refers to it, and a
// streaming recorder holds only the live flows' records, while the outputs
// stay what keeping everything gives.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "experiment/flows_csv_file.h"
#include "experiment/report.h"
#include "metrics/summary.h"
#include "support/cli_run.h"
#include "support/experiments.h"

namespace safs {
namespace {

constexpr int kFlows = 2000;
constexpr int kHosts = 16;

// kFlows short flows, one every 10 us, from the first half of a star to the
// second: a few are under way at once, and a finished flow's state waits at
// most about a retransmission timeout (1 ms: its timer's event) to be freed.
ExperimentConfig many_short_flows(const char* transport, const char* background = "") {
  ExperimentConfig config = testing::star(kHosts);
  config.transport = transport;
  config.background_transport = background;
  for (int i = 0; i < kFlows; ++i) {
    testing::add_flow(config, i % (kHosts / 2), kHosts / 2 + (i * 3) % (kHosts / 2), 20'000,
                      i * 10 * kPsPerUs);
  }
  for (std::size_t i = 0; i < testing::listed_flows(config).size(); i += 2) {
    FlowSpec& urgent = testing::listed_flows(config)[i];
    urgent.flow_class = FlowClass::kUrgent;
    urgent.deadline_ps = urgent.start_ps + 5 * kPsPerUs;  // some are met, some missed
  }
  return config;
}

// The most flows the transport held at once, sampled every 100 us.
std::size_t peak_live_flows(Experiment& e) {
  std::size_t peak = 0;
  for (TimePs t = 0; !e.recorder().all_complete() && t < 200 * kPsPerMs; t += 100 * kPsPerUs) {
    e.run_until(t);
    peak = std::max(peak, e.transport().live_flows());
  }
  e.run();
  return peak;
}

class FlowRelease : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

TEST_P(FlowRelease, StateOfFinishedFlowsIsFreed) {
  Experiment e(many_short_flows(GetParam().first, GetParam().second));
  const std::size_t peak = peak_live_flows(e);
  ASSERT_TRUE(e.recorder().all_complete());
  // Kept for the whole run, the state of every flow would still be there.
  EXPECT_LT(peak, static_cast<std::size_t>(kFlows / 4));
  EXPECT_LT(e.transport().live_flows(), static_cast<std::size_t>(kFlows / 4));
  // A freed flow's counts reached its record before its state went.
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_EQ(r.delivered_bytes, r.spec.size_bytes) << r.spec.id;
    EXPECT_GT(r.data_packets, 0u) << r.spec.id;
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, FlowRelease,
                         ::testing::Values(std::pair{"dctcp", ""}, std::pair{"reno", ""},
                                           std::pair{"d2tcp", ""}, std::pair{"safs", ""},
                                           std::pair{"homa", ""}, std::pair{"pfabric", ""},
                                           std::pair{"safs", "reno"}),
                         [](const auto& test) {
                           return std::string(test.param.first) +
                                  (*test.param.second ? "_over_" : "") + test.param.second;
                         });

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(StreamedRecords, SameOutputsWhileHoldingOnlyLiveFlows) {
  Experiment kept(many_short_flows("safs"));
  kept.run();
  const std::string expected = flows_csv_text(kept);

  const std::filesystem::path dir = safs::testing::process_temp_dir() / "safs-flow-release-test";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "flows.csv").string();
  Experiment streamed(many_short_flows("safs"));
  FlowsCsvFile file(path);
  streamed.stream_records([&file](const FlowRecord& r) { file.add(r); });
  streamed.run();
  file.finish(streamed.recorder());

  EXPECT_EQ(read_text(path), expected);
  EXPECT_GT(file.spilled(), static_cast<std::size_t>(kFlows / 2));
  EXPECT_LT(streamed.recorder().held(), static_cast<std::size_t>(kFlows / 4));
  EXPECT_THROW(static_cast<void>(streamed.recorder().records()), std::logic_error);
  const FlowClass urgent = FlowClass::kUrgent, background = FlowClass::kBackground;
  for (const FlowClass* only : {static_cast<const FlowClass*>(nullptr), &urgent, &background}) {
    const FlowSummary a = kept.recorder().summary(kept.sim().now(), only);
    const FlowSummary b = streamed.recorder().summary(streamed.sim().now(), only);
    EXPECT_EQ(a.flows, b.flows);
    EXPECT_EQ(a.met_deadline, b.met_deadline);
    EXPECT_EQ(a.max_lateness_s, b.max_lateness_s);
    EXPECT_EQ(a.fct_mean_s, b.fct_mean_s);
    EXPECT_EQ(a.fct_p99_s, b.fct_p99_s);
    EXPECT_EQ(a.slowdown_mean, b.slowdown_mean);
    EXPECT_EQ(a.mean_lateness_s, b.mean_lateness_s);
    EXPECT_EQ(a.delivered_gbps, b.delivered_gbps);
    EXPECT_EQ(a.goodput_gbps, b.goodput_gbps);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace safs
