// Same scenario and seed: byte-identical outputs. Another seed: still completes.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "experiment/report.h"
#include "support/cli_run.h"
#include "support/experiments.h"

namespace safs {
namespace {

// A run where the seed matters: random loss and ECMP over a leaf-spine.
ExperimentConfig lossy_leaf_spine(std::uint64_t seed) {
  ExperimentConfig config;
  config.seed = seed;
  config.topology.kind = TopologyKind::kLeafSpine;
  config.topology.hosts_per_leaf = 4;
  config.topology.leaves = 2;
  config.topology.spines = 2;
  config.network.link_loss_rate = 0.005;
  for (int i = 0; i < 8; ++i)
    testing::add_flow(config, i, (i + 4) % 8, 500'000 + 1000 * i, i * kPsPerUs);
  return config;
}

std::string flows_csv(std::uint64_t seed) {
  Experiment e(lossy_leaf_spine(seed));
  e.run();
  EXPECT_TRUE(e.recorder().all_complete()) << "seed " << seed;
  // In this process's own directory: two tests of this file write the same
  // seed's file, and ctest runs them at once.
  const std::filesystem::path path =
      testing::process_temp_dir() / ("safs-determinism-" + std::to_string(seed) + ".csv");
  write_flows_csv(e, path.string());
  std::string text = testing::read_text(path);
  std::filesystem::remove(path);
  return text;
}

TEST(Determinism, SameSeedGivesByteIdenticalFlowsCsv) {
  const std::string first = flows_csv(11);
  const std::string second = flows_csv(11);
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(first, second);
}

TEST(Determinism, DifferentSeedCompletesWithDifferentTiming) {
  const std::string a = flows_csv(11);
  const std::string b = flows_csv(12);
  EXPECT_NE(a, b) << "loss draws should depend on the seed";
}

TEST(Determinism, AddingAFlowDoesNotShiftLossDrawsOfOtherLinks) {
  // Loss streams are keyed by link, not by draw order across the network:
  // a flow on a disjoint pair of hosts leaves the others' results unchanged.
  ExperimentConfig base;
  base.seed = 3;
  base.topology.kind = TopologyKind::kStar;
  base.topology.hosts = 4;
  base.network.link_loss_rate = 0.01;
  testing::add_flow(base, 0, 1, 2'000'000);
  ExperimentConfig more = base;
  testing::add_flow(more, 2, 3, 2'000'000);

  Experiment a(base), b(more);
  a.run();
  b.run();
  EXPECT_EQ(a.recorder().records()[0].finish_ps, b.recorder().records()[0].finish_ps);
}

}  // namespace
}  // namespace safs
