// Workload generators: flow-size distributions, Poisson arrivals, bulk chains.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "experiment/experiment.h"
#include "support/cli_run.h"
#include "support/experiments.h"
#include "workload/flow_size_cdf.h"
#include "workload/poisson_flows.h"

namespace safs {
namespace {

std::string data(const char* name) { return std::string(SAFS_SOURCE_DIR) + "/data/cdf/" + name; }

TEST(FlowSizeCdf, WebSearchMeanMatchesTheLiterature) {
  const FlowSizeCdf cdf = FlowSizeCdf::load(data("websearch.csv"));
  // background.md §8: mean about 1138-1141 packets of 1460 B.
  EXPECT_NEAR(cdf.mean_bytes() / kCdfPacketBytes, 1139.5, 2.0);
  const FlowSizeCdf mining = FlowSizeCdf::load(data("datamining.csv"));
  EXPECT_NEAR(mining.mean_bytes() / kCdfPacketBytes, 5116.6, 1.0);
}

TEST(FlowSizeCdf, InterpolatedSamplesFollowTheCdf) {
  const FlowSizeCdf cdf = FlowSizeCdf::load(data("websearch.csv"));
  Rng rng(1, "cdf-test");
  const int n = 200'000;
  int at_most_19_packets = 0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const auto size = static_cast<double>(cdf.sample(rng));
    sum += size;
    if (size <= 19 * kCdfPacketBytes) ++at_most_19_packets;
  }
  EXPECT_NEAR(static_cast<double>(at_most_19_packets) / n, 0.30, 0.005);  // the point (19, .3)
  EXPECT_NEAR(sum / n / cdf.mean_bytes(), 1.0, 0.03);
}

TEST(FlowSizeCdf, ByteCdfsAreDiscrete) {
  const FlowSizeCdf cdf = FlowSizeCdf::load(data("homa-w4.csv"));
  std::set<std::uint64_t> listed;
  std::ifstream in(data("homa-w4.csv"));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && std::isdigit(static_cast<unsigned char>(line[0]))) {
      listed.insert(std::stoull(line.substr(0, line.find(','))));
    }
  }
  Rng rng(2, "cdf-test");
  for (int i = 0; i < 10'000; ++i)
    ASSERT_TRUE(listed.count(cdf.sample(rng))) << "not a listed size";
}

TEST(FlowSizeCdf, MalformedFilesNameTheLine) {
  const auto path = safs::testing::process_temp_dir() / "safs-bad.csv";
  auto expect_error = [&](const std::string& text, const std::string& fragment) {
    std::ofstream(path) << text;
    try {
      FlowSizeCdf::load(path.string());
      FAIL() << "no error for: " << text;
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect_error("sizes,cdf\n1,1\n", ":1: expected the header");
  expect_error("# c\nbytes,cdf\n10,0.5\n5,1\n",
               ":4: sizes and cumulative fractions must not decrease");
  expect_error("bytes,cdf\n10,0.5\n20,0.9\n", "the last cumulative fraction must be 1");
  expect_error("bytes,cdf\nten,1\n", ":2: expected two numbers");
  expect_error("bytes,cdf\n1e300,1\n", ":2: size must be 1 to 1e15 bytes");
  EXPECT_THROW(FlowSizeCdf::load("/nonexistent.csv"), std::invalid_argument);
  // A device or a FIFO is refused before it is opened (it would be read
  // without end, or block).
  try {
    FlowSizeCdf::load("/dev/zero");
    FAIL() << "/dev/zero was read as a CDF";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("a character device"), std::string::npos) << e.what();
  }
}

// All flows a generator makes in `duration`, without a network.
std::vector<FlowSpec> generate(const PoissonSpec& spec, std::uint64_t seed, std::uint64_t index,
                               TimePs duration) {
  Simulator sim;
  std::vector<FlowSpec> flows;
  PoissonFlows gen(sim, spec, FlowSizeCdf::load(spec.cdf_path), 16, 100e9, 4096, 78, seed, index,
                   [&](const FlowSpec& f) { flows.push_back(f); }, {});
  gen.arm();
  sim.run_until(duration);
  return flows;
}

TEST(PoissonFlows, OffersTheTargetLoad) {
  PoissonSpec spec;
  spec.cdf_path = data("homa-w4.csv");
  spec.load = 0.4;
  const TimePs duration = 50 * kPsPerMs;
  const std::vector<FlowSpec> flows = generate(spec, 1, 0, duration);
  double wire_bits = 0;
  for (const FlowSpec& f : flows) {
    EXPECT_NE(f.src, f.dst);
    wire_bits += 8.0 * static_cast<double>(f.size_bytes + (f.size_bytes + 4095) / 4096 * 78);
  }
  // 16 senders at 40% of 100 Gbit/s.
  const double offered = wire_bits / ps_to_sec(duration) / (16 * 100e9);
  EXPECT_NEAR(offered, 0.4, 0.04);
}

TEST(PoissonFlows, GeneratorsDrawFromTheirOwnStreams) {
  PoissonSpec spec;
  spec.cdf_path = data("websearch.csv");
  spec.load = 0.3;
  const auto a = generate(spec, 5, 0, 5 * kPsPerMs);
  const auto b = generate(spec, 5, 0, 5 * kPsPerMs);
  const auto c = generate(spec, 5, 1, 5 * kPsPerMs);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].start_ps, b[i].start_ps);
    EXPECT_EQ(a[i].size_bytes, b[i].size_bytes);
  }
  EXPECT_NE(a.front().start_ps, c.front().start_ps) << "another index is another stream";
}

TEST(PoissonFlows, RespectsHostSetsAndLimits) {
  PoissonSpec spec;
  spec.cdf_path = data("websearch.csv");
  spec.load = 0.5;
  spec.senders = {1, 2};
  spec.receivers = {0, 1};
  spec.max_flows = 100;
  const auto flows = generate(spec, 9, 0, kPsPerSec);
  ASSERT_EQ(flows.size(), 100u);
  for (const FlowSpec& f : flows) {
    EXPECT_TRUE(f.src == 1 || f.src == 2);
    EXPECT_TRUE(f.dst == 0 || f.dst == 1);
    EXPECT_NE(f.src, f.dst);
  }
}

// `hosts` hosts and one listed 50 MB flow from host 1 to host 0: the run
// lasts as long as it does.
ExperimentConfig config_with_a_long_listed_flow(int hosts) {
  ExperimentConfig config;
  config.topology.hosts = hosts;
  FlowSpec listed;
  listed.src = 1;
  listed.dst = 0;
  listed.size_bytes = 50'000'000;
  testing::listed_flows(config).push_back(listed);
  return config;
}

TEST(BulkChains, SendBackToBackUntilTheRunEnds) {
  ExperimentConfig config = config_with_a_long_listed_flow(3);
  BulkSpec chain;
  chain.src = 2;
  chain.dst = 0;
  chain.size_bytes = 1'000'000;
  config.workloads.find_or_add<BulkTraffic>().chains.push_back(chain);
  Experiment e(config);
  e.run();
  const auto& records = e.recorder().records();
  ASSERT_GT(records.size(), 5u) << "the chain should have sent several flows";
  for (std::size_t i = 2; i < records.size(); ++i) {
    // Each chain flow starts the moment the previous one completed.
    ASSERT_TRUE(records[i - 1].complete());
    EXPECT_EQ(records[i].spec.start_ps, records[i - 1].finish_ps);
  }
  EXPECT_FALSE(records.back().complete()) << "the run ends with the listed flow";
  EXPECT_EQ(e.sim().now(), records[0].finish_ps);
}

// With a period the chain is an open loop: its flows start on the clock,
// overlapping when one outlasts the period, and stop after `count`.
TEST(BulkChains, PeriodicChainsStartOnTheClockWhetherOrNotTheLastFlowEnded) {
  ExperimentConfig config = config_with_a_long_listed_flow(4);
  BulkSpec periodic;
  periodic.src = 2;
  periodic.dst = 0;
  periodic.size_bytes = 2'000'000;  // about 160 us at 100 Gbit/s, more than the period
  periodic.start_ps = 10 * kPsPerUs;
  periodic.period_ps = 100 * kPsPerUs;
  periodic.count = 5;
  BulkSpec closed = periodic;  // the same without a period: back to back
  closed.src = 3;
  closed.period_ps = 0;
  config.workloads.find_or_add<BulkTraffic>().chains = {periodic, closed};
  Experiment e(config);
  e.run();
  std::vector<const FlowRecord*> from_periodic, from_closed;
  for (const FlowRecord& r : e.recorder().records()) {
    if (r.spec.src == 2) from_periodic.push_back(&r);
    if (r.spec.src == 3) from_closed.push_back(&r);
  }
  ASSERT_EQ(from_periodic.size(), 5u);
  for (std::size_t k = 0; k < from_periodic.size(); ++k) {
    EXPECT_EQ(from_periodic[k]->spec.start_ps, (10 + 100 * static_cast<TimePs>(k)) * kPsPerUs);
  }
  EXPECT_GT(from_periodic[0]->finish_ps, from_periodic[1]->spec.start_ps)
      << "the second burst should start before the first has ended";
  ASSERT_EQ(from_closed.size(), 5u);
  for (std::size_t k = 1; k < from_closed.size(); ++k) {
    EXPECT_EQ(from_closed[k]->spec.start_ps, from_closed[k - 1]->finish_ps);
  }
}

TEST(Experiment, MeasuredPoissonFlowsAllCompleteAndDeadlinesFollowTheFactor) {
  ExperimentConfig config;
  config.topology.hosts = 8;
  PoissonSpec spec;
  spec.cdf_path = data("websearch.csv");
  spec.load = 0.3;
  spec.stop_ps = 500 * kPsPerUs;
  spec.deadline_factor = 2.0;
  config.workloads.add(spec);
  Experiment e(config);
  e.run();
  ASSERT_GT(e.recorder().records().size(), 10u);
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_TRUE(r.complete());
    EXPECT_EQ(r.spec.deadline_ps, r.spec.start_ps + 2 * r.ideal_fct_ps);
  }
}

}  // namespace
}  // namespace safs
