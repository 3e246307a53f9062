// Op-duration jitter: lognormal noise with the plan as its mean, stragglers
// at their rate, and timestamps that know only the plan until ops end.
#include "workload/compute/op_jitter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "engine/simulator.h"
#include "experiment/experiment.h"
#include "workload/compute/compute_engine.h"
#include "workload/compute/compute_workload.h"
#include "workload/inference/inference_driver.h"
#include "workload/pipeline/pipeline_workload.h"

namespace safs {
namespace {

// `n` ops of 1 ms each, spread over four GPUs, no transfers.
ComputeGraph independent_ops(int n) {
  ComputeGraph g;
  for (int i = 0; i < n; ++i) g.add_op(i % 4, kPsPerMs, "op");
  return g;
}

TEST(OpJitter, InactiveJitterIsThePlan) {
  const ComputeGraph g = independent_ops(100);
  const RealDurations real = draw_real_durations(g, OpJitter{}, 1, 0);
  EXPECT_EQ(real.stragglers, 0u);
  for (const TimePs d : real.duration_ps) EXPECT_EQ(d, kPsPerMs);
}

TEST(OpJitter, LognormalNoiseKeepsThePlannedMean) {
  const ComputeGraph g = independent_ops(20000);
  for (const double sigma : {0.1, 0.5}) {
    const RealDurations real = draw_real_durations(g, {.sigma = sigma}, 3, 0);
    std::vector<double> factors;
    double sum = 0;
    for (const TimePs d : real.duration_ps) {
      factors.push_back(static_cast<double>(d) / kPsPerMs);
      sum += factors.back();
    }
    // sd of the mean factor: sqrt(exp(sigma^2) - 1) / sqrt(20000), 0.4% at 0.5.
    EXPECT_NEAR(sum / 20000, 1.0, 0.015) << sigma;
    // The median is exp(mu) = exp(-sigma^2 / 2): below the plan.
    std::nth_element(factors.begin(), factors.begin() + 10000, factors.end());
    EXPECT_NEAR(factors[10000], std::exp(-sigma * sigma / 2), 0.015) << sigma;
    EXPECT_GT(*std::max_element(factors.begin(), factors.end()), 1 + sigma) << "a spread";
  }
}

TEST(OpJitter, StragglersAppearAtTheirRateAndTakeTheirFactor) {
  const ComputeGraph g = independent_ops(20000);
  const RealDurations real =
      draw_real_durations(g, {.straggler_every = 20, .straggler_factor = 3}, 5, 0);
  // 1000 expected, sd about 31.
  EXPECT_NEAR(static_cast<double>(real.stragglers), 1000, 100);
  std::uint32_t tripled = 0;
  for (const TimePs d : real.duration_ps) {
    ASSERT_TRUE(d == kPsPerMs || d == 3 * kPsPerMs) << d;  // sigma 0: the plan or 3x
    tripled += d == 3 * kPsPerMs ? 1 : 0;
  }
  EXPECT_EQ(tripled, real.stragglers);
}

TEST(OpJitter, DrawsDependOnSeedAndStreamNotOnOtherOps) {
  const OpJitter jitter{.sigma = 0.3};
  const ComputeGraph g = independent_ops(50);
  const auto durations = [&](std::uint64_t seed, std::uint64_t stream, const ComputeGraph& graph) {
    return draw_real_durations(graph, jitter, seed, stream).duration_ps;
  };
  EXPECT_EQ(durations(1, 0, g), durations(1, 0, g));
  EXPECT_NE(durations(1, 0, g), durations(2, 0, g));
  EXPECT_NE(durations(1, 0, g), durations(1, 1, g));
  // A longer graph keeps the first ops' durations.
  const std::vector<TimePs> longer = durations(1, 0, independent_ops(80));
  EXPECT_EQ(std::vector<TimePs>(longer.begin(), longer.begin() + 50), durations(1, 0, g));
}

// GPU 0 runs A then C; GPU 1 runs P, whose output C needs. A is planned at
// 1 ms but really takes 3 ms. The transfer P -> C is launched at P's end
// with C's start as the runtime would project it (behind A's planned end,
// 1 ms), and moves to A's real end (3 ms) only when A has ended.
TEST(OpJitter, TimestampsSeeThePlanUntilTheOpEnds) {
  ComputeGraph g;
  const int a = g.add_op(0, kPsPerMs, "A");
  const int c = g.add_op(0, kPsPerMs, "C");
  const int p = g.add_op(1, kPsPerMs / 2, "P");
  g.add_transfer(p, c, 1000);
  std::vector<TimePs> real(3);
  real[static_cast<std::size_t>(a)] = 3 * kPsPerMs;
  real[static_cast<std::size_t>(c)] = kPsPerMs;
  real[static_cast<std::size_t>(p)] = kPsPerMs / 2;

  Simulator sim;
  std::vector<TimePs> launched_deadline;
  std::vector<std::pair<TimePs, TimePs>> updates;  // (when, new deadline)
  ComputeHooks hooks;
  hooks.launch = [&](const FlowSpec& flow) {
    launched_deadline.push_back(flow.deadline_ps);
    return std::uint32_t{0};
  };
  hooks.update_deadline = [&](std::uint32_t, TimePs deadline_ps) {
    updates.emplace_back(sim.now(), deadline_ps);
  };
  ComputeEngine engine(sim, g, hooks, real);
  engine.start();
  sim.run_until(4 * kPsPerMs);
  ASSERT_EQ(launched_deadline.size(), 1u);
  EXPECT_EQ(launched_deadline[0], kPsPerMs) << "the real 3 ms of A stay hidden";
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0], std::make_pair(3 * kPsPerMs, 3 * kPsPerMs));
  engine.on_flow_complete(0);  // the input arrives; C runs 3..4 ms
  sim.run();
  ASSERT_TRUE(engine.finished());
  EXPECT_EQ(engine.ops()[static_cast<std::size_t>(c)].start_ps, 4 * kPsPerMs);
}

// A scaled-down ZB-H1 pipeline on SAFS, with the run's op jitter.
std::unique_ptr<Experiment> zb_run(const OpJitter& jitter, std::uint64_t seed = 1,
                                   std::uint64_t hidden = 256) {
  PipelineWorkload w;
  w.pipeline.schedule = pipeline::Schedule::kZbH1;
  w.pipeline.stages = 4;
  w.pipeline.microbatches = 8;
  w.pipeline.t_f = w.pipeline.t_b = w.pipeline.t_w = kPsPerMs;
  w.hidden = hidden;  // 256: 2 MiB transfers, a sixth of an op at 100 Gbit/s
  ExperimentConfig config;
  config.topology.hosts = 4;
  config.transport = "safs";
  config.seed = seed;
  config.op_jitter = jitter;
  config.workloads.add(build_pipeline_graph(w));
  auto e = std::make_unique<Experiment>(config);
  e->run();
  EXPECT_TRUE(e->find_workload<ComputeWorkload>()->engine().finished());
  return e;
}

const ComputeEngine& engine_of(const Experiment& e) {
  return e.find_workload<ComputeWorkload>()->engine();
}

// Same ops, same flows: the start and end of every op and every flow's finish.
void expect_same_run(const Experiment& x, const Experiment& y) {
  const ComputeEngine& a = engine_of(x);
  const ComputeEngine& b = engine_of(y);
  ASSERT_EQ(a.ops().size(), b.ops().size());
  for (std::size_t i = 0; i < a.ops().size(); ++i) {
    EXPECT_EQ(a.ops()[i].start_ps, b.ops()[i].start_ps) << i;
    EXPECT_EQ(a.ops()[i].end_ps, b.ops()[i].end_ps) << i;
  }
  ASSERT_EQ(x.recorder().records().size(), y.recorder().records().size());
  for (std::size_t i = 0; i < x.recorder().records().size(); ++i) {
    EXPECT_EQ(x.recorder().records()[i].finish_ps, y.recorder().records()[i].finish_ps) << i;
    EXPECT_EQ(x.recorder().records()[i].spec.deadline_ps,
              y.recorder().records()[i].spec.deadline_ps)
        << i;
  }
}

TEST(OpJitterInARun, SigmaZeroIsNoJitter) {
  const auto plain = zb_run({});
  // Inactive (sigma 0, no stragglers; the factor unused).
  expect_same_run(*plain, *zb_run({.sigma = 0, .straggler_factor = 7}));
  // Active, but every factor is 1 (stragglers too rare to draw one).
  const auto drawn = zb_run({.sigma = 0, .straggler_every = 1'000'000'000});
  expect_same_run(*plain, *drawn);
  EXPECT_EQ(drawn->find_workload<ComputeWorkload>()->real_durations().stragglers, 0u);
}

TEST(OpJitterInARun, StragglersLengthenTheIterationAndMoveTimestamps) {
  // 8 MiB transfers, two thirds of an op: often in flight when a straggler ends.
  const auto plain = zb_run({}, 1, 1024);
  const auto slow = zb_run({.straggler_every = 8, .straggler_factor = 3}, 1, 1024);
  const ComputeWorkload& w = *slow->find_workload<ComputeWorkload>();
  EXPECT_GT(w.real_durations().stragglers, 0u);
  EXPECT_GT(engine_of(*slow).makespan_ps(), engine_of(*plain).makespan_ps());
  // The plan is the same; the runtime learns of the stragglers as they end.
  EXPECT_EQ(engine_of(*slow).planned_makespan_ps(), engine_of(*plain).planned_makespan_ps());
  std::uint32_t plain_updates = 0, slow_updates = 0;
  for (const TransferRecord& t : engine_of(*plain).transfers()) plain_updates += t.deadline_updates;
  for (const TransferRecord& t : engine_of(*slow).transfers()) slow_updates += t.deadline_updates;
  EXPECT_GT(slow_updates, plain_updates) << plain_updates;
  const RunReport report = slow->report();
  EXPECT_EQ(report.summary_sections["compute"]["op_jitter"]["stragglers"],
            w.real_durations().stragglers);
  EXPECT_FALSE(plain->report().summary_sections["compute"].contains("op_jitter"));
}

TEST(OpJitterInARun, SameSeedSameRunOtherSeedOtherDurations) {
  const OpJitter jitter{.sigma = 0.2};
  expect_same_run(*zb_run(jitter, 4), *zb_run(jitter, 4));
  EXPECT_NE(zb_run(jitter, 4)->find_workload<ComputeWorkload>()->real_durations().duration_ps,
            zb_run(jitter, 5)->find_workload<ComputeWorkload>()->real_durations().duration_ps);
}

// Free-communication AFD decode (one attention and one FFN instance, every
// op 100 us, samples 10 us): with every op a straggler of factor 2 and no
// noise, every step takes exactly twice its compute-only time.
TEST(OpJitterInARun, InferenceStepsStretchWithTheirOps) {
  InferenceWorkload w;
  w.afd.attention_hosts = {0};
  w.afd.ffn_hosts = {1};
  w.afd.layers = 2;
  w.afd.microbatches = 3;
  w.afd.max_tokens_per_microbatch = 2;
  w.afd.compute = {100 * kPsPerUs, 0, 0, 100 * kPsPerUs, 0, 10 * kPsPerUs};
  w.requests.output_tokens_min = w.requests.output_tokens_max = 4;
  w.batch_load = 0;
  w.requests.arrivals_per_s = 1e6;
  w.warmup_requests = 1;
  w.measured_requests = 12;
  w.free_communication = true;
  ExperimentConfig config;
  config.topology.hosts = 2;
  config.op_jitter = {.straggler_every = 1, .straggler_factor = 2};
  config.workloads.add(w);
  Experiment e(config);
  std::uint64_t ops = 0;
  e.find_workload<InferenceDriver>()->set_step_observer(
      [&ops](const ComputeEngine& step) { ops += step.graph().ops.size(); });
  e.run();
  const InferenceDriver& d = *e.find_workload<InferenceDriver>();
  ASSERT_TRUE(d.finished());
  ASSERT_GE(d.steps().size(), 3u);
  for (const StepRecord& r : d.steps()) {
    if (r.end_ps <= r.start_ps) continue;  // still running at the end
    EXPECT_EQ(r.end_ps - r.start_ps, 2 * r.compute_only_ps);
  }
  EXPECT_GT(ops, 0u);
  EXPECT_GE(d.stragglers(), ops);  // every op of every step (the last one may still run)
  EXPECT_EQ(e.report().summary_sections["inference"]["op_jitter"]["stragglers"], d.stragglers());
}

}  // namespace
}  // namespace safs
