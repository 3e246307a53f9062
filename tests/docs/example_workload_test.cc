// The example workload of docs/adding-a-workload.md, run through Experiment.
#include <gtest/gtest.h>

#include "docs/example_workload.h"
#include "experiment/experiment.h"
#include "workload/compute/compute_workload.h"

namespace safs {
namespace {

TEST(ExampleWorkload, RingAllReduceGraphShape) {
  example::RingAllReduce spec;
  spec.gpus = {0, 1, 2, 3};
  const ComputeGraph graph = example::build_ring_allreduce_graph(spec);
  EXPECT_NO_THROW(graph.validate());
  EXPECT_EQ(graph.ops.size(), 4u * (1 + 6));
  EXPECT_EQ(graph.transfers.size(), 4u * 6);
  for (const Transfer& t : graph.transfers) {
    EXPECT_EQ(t.dst, (t.src + 1) % 4);  // always to the next GPU in the ring
    EXPECT_EQ(t.size_bytes, 16ull << 20);
  }
  // With free communication: the backward pass, then the steps back to back.
  const std::vector<TimePs> plan = planned_starts(graph);
  EXPECT_EQ(plan.back(), spec.backward_ps + 5 * spec.step_ps);
}

// The section read from a map, as a scenario file's [allreduce] table would be.
TEST(ExampleWorkload, KindReadsItsSection) {
  const WorkloadKind kind = example::ring_allreduce_kind();
  ExperimentConfig config;
  config.topology.hosts = 4;
  const FileResolver same = [](const std::string& path) { return path; };
  const auto gpus = [](std::vector<std::int64_t> hosts) {
    return MapReader("allreduce", Settings{{"gpus", Setting(std::move(hosts))}});
  };
  kind.read(gpus({0, 1, 2}), same, config);
  ASSERT_NE(config.workloads.find<example::RingAllReduce>(), nullptr);
  const ComputeGraph graph =
      example::build_ring_allreduce_graph(*config.workloads.find<example::RingAllReduce>());
  EXPECT_EQ(graph.transfers.size(), 3u * 4);  // 3 GPUs, 2 x (3 - 1) steps
  ExperimentConfig small;
  small.topology.hosts = 2;
  EXPECT_THROW(kind.read(gpus({0, 5}), same, small), std::invalid_argument);
  EXPECT_EQ(kind.keys.size(), 4u);
}

class RingOverTransport : public ::testing::TestWithParam<const char*> {};

// [snippet:run]
TEST_P(RingOverTransport, CompletesAndItsBubblesAreTheCommunication) {
  example::RingAllReduce spec;
  spec.gpus = {0, 1, 2, 3};

  ExperimentConfig config;
  config.topology.hosts = 4;  // a star at 100 Gbit/s
  config.transport = GetParam();
  config.workloads.add(spec);
  Experiment experiment(config);
  experiment.run();

  const ComputeEngine& ring = experiment.find_workload<ComputeWorkload>()->engine();
  ASSERT_TRUE(ring.finished());
  ASSERT_TRUE(experiment.recorder().all_complete());  // every chunk arrived
  EXPECT_EQ(ring.planned_makespan_ps(), spec.backward_ps + spec.steps() * spec.step_ps);

  // Each step waits for one chunk: a GPU idles about steps x chunk time.
  const std::uint64_t packets = (spec.chunk_bytes() + 4095) / 4096;
  const TimePs chunk_ps = serialization_ps(spec.chunk_bytes() + packets * 78, 100'000'000'000);
  for (const int gpu : spec.gpus) {
    EXPECT_GE(ring.bubble_ps(gpu), spec.steps() * chunk_ps);
    EXPECT_LE(ring.bubble_ps(gpu), spec.steps() * chunk_ps * 12 / 10);
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, RingOverTransport, ::testing::Values("dctcp", "safs"));
// [end-snippet]

// [snippet:checkpoint-run]
TEST(ExampleWorkload, CheckpointWritesHoldTheRunUntilTheLastLands) {
  ExperimentConfig config;
  config.topology.hosts = 2;
  example::Checkpoints checkpoints;  // 3 x 256 MiB, one every 10 ms
  config.workloads.add(checkpoints);
  Experiment experiment(config);
  experiment.run();

  const auto& records = experiment.recorder().records();
  ASSERT_EQ(records.size(), 3u);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(records[i].spec.start_ps, static_cast<TimePs>(i + 1) * checkpoints.period_ps);
    EXPECT_TRUE(records[i].complete());
  }
  EXPECT_EQ(experiment.sim().now(), records.back().finish_ps);  // not a moment longer
  const RunReport report = experiment.report();
  EXPECT_EQ(report.summary_sections["checkpoints"]["landed"], 3);
  EXPECT_EQ(experiment.workloads().front()->progress()->done, 3);
}
// [end-snippet]

}  // namespace
}  // namespace safs
