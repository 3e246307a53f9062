// The compute model: ops wait for their GPU and their inputs; transfers carry
// no-bubble timestamps that follow the consumer's GPU.
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "engine/timer.h"
#include "experiment/experiment.h"
#include "workload/bulk_chain.h"
#include "workload/compute/bubble_account.h"
#include "workload/compute/compute_graph.h"
#include "workload/compute/compute_workload.h"
#include "workload/pipeline/pipeline_workload.h"

namespace safs {
namespace {

ExperimentConfig star_with(ComputeGraph graph, int hosts, const char* transport = "dctcp") {
  ExperimentConfig config;
  config.topology.hosts = hosts;
  config.transport = transport;
  config.workloads.add(std::move(graph));
  return config;
}

TEST(ComputeGraph, PlanWithFreeAndPricedCommunication) {
  ComputeGraph g;
  const int a = g.add_op(0, kPsPerMs, "A");
  const int x = g.add_op(1, 2 * kPsPerMs, "X");
  const int b = g.add_op(1, kPsPerMs, "B");
  g.add_transfer(a, b, 1000);
  const std::vector<TimePs> free = planned_starts(g);
  EXPECT_EQ(free[a], 0);
  EXPECT_EQ(free[x], 0);
  EXPECT_EQ(free[b], 2 * kPsPerMs);  // behind X, not behind the transfer
  const std::vector<TimePs> slow = planned_starts(g, 3 * kPsPerMs);
  EXPECT_EQ(slow[b], 4 * kPsPerMs);  // A ends at 1, +3 in flight
}

// Each duration in range, their sum on one GPU past int64 picoseconds: it
// wrapped negative and was reported as a deadlock.
TEST(ComputeGraph, PlannedTimesPastWhatTimeHoldsAreNamed) {
  ComputeGraph g;
  for (int i = 0; i < 12; ++i) g.add_op(0, 1'000'000 * kPsPerSec, "op" + std::to_string(i));
  try {
    planned_starts(g);
    FAIL() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("past what simulated time holds"), std::string::npos)
        << e.what();
  }
}

TEST(ComputeGraph, DeadlockAndBadGraphsAreReported) {
  ComputeGraph g;
  const int a = g.add_op(0, kPsPerMs, "A");
  const int b = g.add_op(1, kPsPerMs, "B");
  g.add_transfer(a, b, 10);
  g.add_transfer(b, a, 10);  // each waits for the other
  EXPECT_THROW(planned_starts(g), std::logic_error);
  ComputeGraph same;
  const int c = same.add_op(0, 1, "C");
  const int d = same.add_op(0, 1, "D");
  same.add_transfer(c, d, 10);
  EXPECT_THROW(same.validate(), std::invalid_argument);
}

TEST(ComputeEngine, ConsumerStartsWhenItsTransferArrives) {
  ComputeGraph g;
  const int a = g.add_op(0, kPsPerMs, "A");
  const int b = g.add_op(1, kPsPerMs, "B");
  g.add_transfer(a, b, 10'000'000);
  Experiment e(star_with(g, 2));
  e.run();
  const ComputeEngine& c = e.find_workload<ComputeWorkload>()->engine();
  ASSERT_TRUE(c.finished());
  const FlowRecord& flow = e.recorder().records()[0];
  ASSERT_TRUE(flow.complete());
  EXPECT_EQ(flow.spec.start_ps, kPsPerMs);  // when A ended
  EXPECT_EQ(c.ops()[b].start_ps, flow.finish_ps);
  EXPECT_EQ(c.ops()[b].wait_ps, flow.finish_ps);  // GPU 1 idled from 0
  EXPECT_EQ(c.makespan_ps(), flow.finish_ps + kPsPerMs);
  EXPECT_EQ(c.planned_makespan_ps(), 2 * kPsPerMs);
  EXPECT_EQ(c.transfers()[0].first_deadline_ps, kPsPerMs);  // B's planned start
  EXPECT_EQ(c.bubble_ps(1), c.makespan_ps() - kPsPerMs);
  EXPECT_EQ(flow.spec.flow_class, FlowClass::kUrgent);
}

// A transfer without a producer leaves its source host as the computation
// starts; its consumer waits for it, on the network or with free communication.
TEST(ComputeEngine, TransferWithoutAProducerStartsWithTheComputation) {
  ComputeGraph g;
  const int a = g.add_op(0, kPsPerMs, "A");
  const int b = g.add_op(1, kPsPerMs, "B");
  g.add_transfer(-1, a, 10'000'000, /*src=*/2);
  g.add_transfer(a, b, 1000);
  EXPECT_EQ(planned_starts(g), (std::vector<TimePs>{0, kPsPerMs}));
  Experiment e(star_with(g, 3));
  e.run();
  const ComputeEngine& c = e.find_workload<ComputeWorkload>()->engine();
  ASSERT_TRUE(c.finished());
  const FlowRecord& input = e.recorder().records()[0];
  EXPECT_EQ(input.spec.src, 2);
  EXPECT_EQ(input.spec.dst, 0);
  EXPECT_EQ(input.spec.start_ps, 0);
  EXPECT_EQ(c.transfers()[0].first_deadline_ps, 0);  // A's planned start
  EXPECT_EQ(c.ops()[a].start_ps, input.finish_ps);

  Simulator sim;
  ComputeEngine free(sim, g, ComputeHooks{});
  free.start();
  sim.run();
  ASSERT_TRUE(free.finished());
  EXPECT_EQ(free.ops()[a].start_ps, 0);
  EXPECT_EQ(free.makespan_ps(), 2 * kPsPerMs);
}

TEST(ComputeEngine, TimestampsMoveLaterWhenTheConsumerFallsBehind) {
  // GPU 1 runs X then B. X needs a large transfer from GPU 2, so GPU 1 falls
  // behind its plan, and the timestamp of B's input (from GPU 0) moves later.
  ComputeGraph g;
  const int z = g.add_op(2, 10 * kPsPerUs, "Z");
  const int a = g.add_op(0, 10 * kPsPerUs, "A");
  const int x = g.add_op(1, 100 * kPsPerUs, "X");
  const int b = g.add_op(1, 100 * kPsPerUs, "B");
  g.add_transfer(z, x, 20'000'000);  // about 1.6 ms at 100 Gbit/s
  const int late_input = g.add_transfer(a, b, 50'000'000);
  Experiment e(star_with(g, 3, "safs"));
  e.run();
  const ComputeEngine& c = e.find_workload<ComputeWorkload>()->engine();
  ASSERT_TRUE(c.finished());
  const TransferRecord& t = c.transfers()[late_input];
  EXPECT_EQ(t.first_deadline_ps, c.ops()[b].planned_start_ps);
  EXPECT_GT(t.deadline_updates, 0u);
  EXPECT_GT(t.deadline_ps, t.first_deadline_ps + kPsPerMs);
  // The flow record follows the last timestamp too.
  EXPECT_EQ(e.recorder().records()[t.flow_id].spec.deadline_ps, t.deadline_ps);
  EXPECT_GE(c.ops()[b].start_ps, c.ops()[x].end_ps);
}

using Watch = std::pair<std::uint32_t, TimePs>;  // flow id, waited for from

// B on GPU 1, behind X (1 ms) if `x_first`, takes flow 0 (no producer, from
// host 2, leaving at once) and flow 1 (from A on GPU 0, leaving when A ends);
// they arrive when told. The engine runs on a bare simulator; what it says
// of waiting consumers is recorded.
struct WatchedRun {
  std::vector<Watch> watched;
  TimePs b_start_ps = -1;
};
WatchedRun run_watched(TimePs a_duration_ps, bool x_first, TimePs flow0_arrives_ps,
                       TimePs flow1_arrives_ps) {
  ComputeGraph g;
  const int a = g.add_op(0, a_duration_ps, "A");
  if (x_first) g.add_op(1, kPsPerMs, "X");
  const int b = g.add_op(1, kPsPerMs, "B");
  g.add_transfer(-1, b, 1000, /*src=*/2);
  g.add_transfer(a, b, 1000);
  Simulator sim;
  WatchedRun run;
  std::uint32_t next_id = 0;
  ComputeHooks hooks;
  hooks.launch = [&](const FlowSpec&) { return next_id++; };
  hooks.update_deadline = [](std::uint32_t, TimePs) {};
  hooks.consumer_waiting = [&](std::uint32_t id, TimePs from_ps) {
    run.watched.emplace_back(id, from_ps);
  };
  ComputeEngine engine(sim, g, hooks);
  Timer arrive0(sim, [&] { engine.on_flow_complete(0); });
  Timer arrive1(sim, [&] { engine.on_flow_complete(1); });
  arrive0.arm_at(flow0_arrives_ps);
  arrive1.arm_at(flow1_arrives_ps);
  engine.start();
  sim.run();
  EXPECT_TRUE(engine.finished());
  run.b_start_ps = engine.ops()[b].start_ps;
  return run;
}

TEST(ComputeEngine, SaysWhenAnIdleGpusNextOpWillWaitForItsInputs) {
  // X runs 0-1 ms; flow 0 arrives while it does, flow 1 (A ends at 0.2 ms)
  // at 3 ms. When X ends GPU 1 idles with B next, and only flow 1 is still
  // on its way: watched from B's timestamp, 1 ms.
  const WatchedRun behind_x = run_watched(200 * kPsPerUs, true, 500 * kPsPerUs, 3 * kPsPerMs);
  EXPECT_EQ(behind_x.watched, (std::vector<Watch>{{1, kPsPerMs}}));
  EXPECT_EQ(behind_x.b_start_ps, 3 * kPsPerMs);
  // B alone on GPU 1, planned at 3 ms (behind A): GPU 1 idles from the
  // start. Flow 0 is watched from B's timestamp as it leaves, flow 1 as it
  // leaves at 3 ms; each once, though both arrive late.
  const WatchedRun idle = run_watched(3 * kPsPerMs, false, 4 * kPsPerMs, 5 * kPsPerMs);
  EXPECT_EQ(idle.watched, (std::vector<Watch>{{0, 3 * kPsPerMs}, {1, 3 * kPsPerMs}}));
  EXPECT_EQ(idle.b_start_ps, 5 * kPsPerMs);
}

}  // namespace
}  // namespace safs

namespace safs {
namespace {

// With tiny transfers the simulated pipeline runs as planned: the iteration
// time is the free-communication plan's, whose bubble the ZeroBubble paper
// gives as (p-1)(T_F + T_B - T_W) for ZB-H1.
TEST(PipelineOnTheNetwork, TinyTransfersReproduceThePlan) {
  PipelineWorkload w;
  w.pipeline.schedule = pipeline::Schedule::kZbH1;
  w.pipeline.stages = 4;
  w.pipeline.microbatches = 8;
  w.pipeline.t_f = w.pipeline.t_b = w.pipeline.t_w = kPsPerMs;
  w.hidden = 16;  // 16 x 4096 x 2 = 128 KiB per transfer: about 11 us at 100 Gbit/s
  ExperimentConfig config;
  config.topology.hosts = 4;
  config.transport = "safs";
  config.workloads.add(build_pipeline_graph(w));
  Experiment e(config);
  e.run();
  const ComputeEngine& c = e.find_workload<ComputeWorkload>()->engine();
  ASSERT_TRUE(c.finished());
  const TimePs busy = 8 * 3 * kPsPerMs;
  EXPECT_EQ(c.planned_makespan_ps(), busy + 3 * (1 + 1 - 1) * kPsPerMs);
  // The schedule's own evaluator, with every transfer taking the fastest and
  // the slowest FCT seen in the run, brackets the simulated iteration.
  TimePs fastest = kTimeNever, slowest = 0;
  for (const FlowRecord& r : e.recorder().records()) {
    fastest = std::min(fastest, r.fct_ps());
    slowest = std::max(slowest, r.fct_ps());
  }
  const auto orders = pipeline::stage_orders(w.pipeline);
  EXPECT_GE(c.makespan_ps(), pipeline::evaluate(w.pipeline, orders, fastest).iteration_time);
  EXPECT_LE(c.makespan_ps(), pipeline::evaluate(w.pipeline, orders, slowest).iteration_time);
  EXPECT_LT(slowest, 30 * kPsPerUs);
  EXPECT_EQ(c.transfers().size(), 2u * 3 * 8);
}

TEST(PipelineOnTheNetwork, BackgroundFlowsComeFromTheirOwnHosts) {
  PipelineWorkload w;
  w.background_flows_per_stage = 2;
  EXPECT_EQ(w.hosts_needed(), 4 + 4 * 2);
  const std::vector<BulkSpec> chains = pipeline_background(w);
  ASSERT_EQ(chains.size(), 8u);
  EXPECT_EQ(chains[0].src, 4);
  EXPECT_EQ(chains[0].dst, 0);
  EXPECT_EQ(chains[7].src, 11);
  EXPECT_EQ(chains[7].dst, 3);
  EXPECT_EQ(w.transfer_bytes(), 64ull << 20);
}

}  // namespace
}  // namespace safs

namespace safs {
namespace {

// A scaled-down ZeroBubble run (ZB-H1, 4 stages, 8 microbatches, 1 ms ops,
// 8 MiB transfers: communication about two thirds of an op) with k bulk
// flows into every stage host.
TimePs zb_iteration_ps(const char* transport, int k, const ComputeEngine** out = nullptr,
                       std::unique_ptr<Experiment>* keep = nullptr, std::uint64_t hidden = 1024) {
  PipelineWorkload w;
  w.pipeline.schedule = pipeline::Schedule::kZbH1;
  w.pipeline.stages = 4;
  w.pipeline.microbatches = 8;
  w.pipeline.t_f = w.pipeline.t_b = w.pipeline.t_w = kPsPerMs;
  w.hidden = hidden;  // 1024: 1024 x 4096 x 2 = 8 MiB
  w.background_flows_per_stage = k;
  ExperimentConfig config;
  config.topology.hosts = 4 + 4 * 5;
  config.transport = transport;
  config.workloads.add(BulkTraffic{pipeline_background(w)});
  config.workloads.add(build_pipeline_graph(w));
  auto e = std::make_unique<Experiment>(config);
  e->run();
  EXPECT_TRUE(e->find_workload<ComputeWorkload>()->engine().finished());
  const TimePs makespan = e->find_workload<ComputeWorkload>()->engine().makespan_ps();
  if (out != nullptr) *out = &e->find_workload<ComputeWorkload>()->engine();
  if (keep != nullptr) *keep = std::move(e);
  return makespan;
}

// The paper's training claim, scaled down: SAFS keeps the iteration time
// with five background flows per stage within 5% of its time with none.
TEST(PipelineOnTheNetwork, SafsIterationBarelyMovesWithBackground) {
  const TimePs alone = zb_iteration_ps("safs", 0);
  const TimePs with_five = zb_iteration_ps("safs", 5);
  EXPECT_LE(static_cast<double>(with_five), 1.05 * static_cast<double>(alone));
  // DCTCP shares each stage's link six ways and does not.
  EXPECT_GT(static_cast<double>(zb_iteration_ps("dctcp", 5)),
            1.05 * static_cast<double>(zb_iteration_ps("dctcp", 0)));
}

// The bubble account of a contended run (DCTCP, two background flows into
// every stage host, so inputs arrive late): per GPU, its idle slices and busy
// ops tile the window, the waits are ops.csv's, the tail is the idle after
// the last op, and the parts add up to makespan - busy.
TEST(BubbleAccount, PartsAddUpToMakespanMinusBusyUnderBackgroundTraffic) {
  const ComputeEngine* c = nullptr;
  std::unique_ptr<Experiment> keep;
  zb_iteration_ps("dctcp", 2, &c, &keep);
  const BubbleAccount account(*c);
  ASSERT_EQ(account.gpus(), 4u);
  TimePs all_waits = 0, all_tails = 0;
  for (int g = 0; g < 4; ++g) {
    const GpuBubbles& b = account.gpu(g);
    TimePs op_waits = 0, idle = 0;
    for (const int op : c->graph().gpu_order[static_cast<std::size_t>(g)]) {
      op_waits += c->ops()[static_cast<std::size_t>(op)].wait_ps;
    }
    for (const IdleSlice& slice : b.idle) {
      EXPECT_GT(slice.length_ps(), 0);
      idle += slice.length_ps();
    }
    EXPECT_EQ(b.waits_ps, op_waits) << "gpu " << g;
    EXPECT_EQ(b.unfinished_op_ps, 0) << "gpu " << g;
    EXPECT_EQ(idle, b.waits_ps + b.after_last_op_ps) << "gpu " << g;
    EXPECT_EQ(b.total_ps(), c->makespan_ps() - c->busy_ps(g)) << "gpu " << g;
    EXPECT_EQ(c->bubble_ps(g), b.total_ps()) << "gpu " << g;
    all_waits += b.waits_ps;
    all_tails += b.after_last_op_ps;
  }
  EXPECT_GT(all_waits, 0);  // late inputs
  EXPECT_GT(all_tails, 0);  // only one GPU ends the iteration
}

// A run stopped mid-iteration: the account still adds up to makespan - busy,
// with the running ops' time inside the window as its own part.
TEST(BubbleAccount, StoppedRunCountsTheUnfinishedOps) {
  ComputeGraph g;
  g.add_op(0, kPsPerMs, "A");
  g.add_op(1, 3 * kPsPerMs, "B");
  g.add_op(0, 5 * kPsPerMs, "C");  // after A on GPU 0
  ExperimentConfig config = star_with(g, 2);
  config.stop_ps = 4 * kPsPerMs;  // A done at 1, B done at 3, C running
  Experiment e(config);
  e.run();
  const ComputeEngine& engine = e.find_workload<ComputeWorkload>()->engine();
  ASSERT_FALSE(engine.finished());
  const BubbleAccount account(engine);
  EXPECT_EQ(account.makespan_ps(), 3 * kPsPerMs);  // B's end
  for (int gpu = 0; gpu < 2; ++gpu) {
    EXPECT_EQ(account.gpu(gpu).total_ps(), engine.makespan_ps() - engine.busy_ps(gpu));
  }
  EXPECT_EQ(account.gpu(0).unfinished_op_ps, 2 * kPsPerMs);  // C from 1 to 3
  EXPECT_EQ(account.gpu(1).total_ps(), 0);
}

// Without contention (and with transfers much shorter than the slack) the
// no-bubble timestamps are honest: a consumer never starts before the
// timestamp its on-time inputs were given, nearly always starts at it (within
// the 1 us update threshold; the rest slipped after their inputs had arrived,
// when timestamps are no longer sent), and with a late input starts as soon
// as the last one arrives.
TEST(PipelineOnTheNetwork, UncontendedTimestampsAreTheConsumersStart) {
  const ComputeEngine* c = nullptr;
  std::unique_ptr<Experiment> keep;
  zb_iteration_ps("safs", 0, &c, &keep, 16);  // 128 KiB transfers, about 11 us
  std::size_t on_time = 0, exact = 0;
  for (std::size_t t = 0; t < c->transfers().size(); ++t) {
    const TransferRecord& r = c->transfers()[t];
    const int consumer = c->graph().transfers[t].consumer;
    TimePs last_input = 0;
    for (const int in : c->graph().ops[consumer].inputs) {
      last_input = std::max(last_input, c->transfers()[in].arrived_ps);
    }
    const OpRecord& op = c->ops()[consumer];
    const std::string& label = c->graph().ops[consumer].label;
    if (last_input <= r.deadline_ps) {
      ++on_time;
      EXPECT_GE(op.start_ps, r.deadline_ps - kPsPerUs) << label;
      if (op.start_ps <= r.deadline_ps + kPsPerUs) ++exact;
    } else {
      EXPECT_EQ(op.start_ps, last_input) << label;
    }
  }
  EXPECT_GT(on_time, c->transfers().size() / 2);
  EXPECT_GE(static_cast<double>(exact), 0.9 * static_cast<double>(on_time));
}

}  // namespace
}  // namespace safs
