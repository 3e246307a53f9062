// The timestamp error model: what the transport sees of each deadline, and
// that the run's records keep the true one.
#include "experiment/timestamp_errors.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "engine/simulator.h"
#include "support/experiments.h"
#include "workload/bulk_chain.h"
#include "workload/compute/compute_graph.h"
#include "workload/compute/compute_workload.h"

namespace safs {
namespace {

struct Delivered {
  std::uint32_t flow_id;
  TimePs deadline_ps;
  TimePs at_ps;
};

// The model with a log of what reached the "transport".
struct Model {
  explicit Model(TimestampErrorModel m, std::uint64_t seed = 1)
      : errors(sim, m, seed, [this](std::uint32_t id, TimePs deadline_ps) {
          delivered.push_back({id, deadline_ps, sim.now()});
        }) {}
  Simulator sim;
  std::vector<Delivered> delivered;
  TimestampErrors errors;
};

FlowSpec urgent_flow(std::uint32_t id, TimePs start_ps, TimePs deadline_ps) {
  FlowSpec flow;
  flow.id = id;
  flow.src = 0;
  flow.dst = 1;
  flow.size_bytes = 100'000;
  flow.start_ps = start_ps;
  flow.deadline_ps = deadline_ps;
  flow.flow_class = FlowClass::kUrgent;
  return flow;
}

constexpr TimePs kIdealPs = 20 * kPsPerUs;

TEST(TimestampErrors, OffPassesEveryTimestampExactly) {
  Model m(TimestampErrorModel{});
  EXPECT_FALSE(m.errors.active());
  const FlowSpec flow = urgent_flow(0, 10 * kPsPerUs, 110 * kPsPerUs);
  EXPECT_EQ(m.errors.as_started(flow, kIdealPs).deadline_ps, flow.deadline_ps);
  m.errors.on_update(0, 150 * kPsPerUs, kIdealPs);
  ASSERT_EQ(m.delivered.size(), 1u);
  EXPECT_EQ(m.delivered[0].deadline_ps, 150 * kPsPerUs);
  EXPECT_EQ(m.errors.counts().updates, 0u);  // nothing modelled, nothing counted
}

TEST(TimestampErrors, BiasShiftsByItsShareOfTheSlack) {
  // Start at 10 us, deadline 110 us, ideal FCT 20 us: slack 80 us.
  const FlowSpec flow = urgent_flow(0, 10 * kPsPerUs, 110 * kPsPerUs);
  Model late({.bias_of_slack = 1.0});
  EXPECT_EQ(late.errors.as_started(flow, kIdealPs).deadline_ps, 190 * kPsPerUs);
  // An update at 0 to 150 us: slack 130 us.
  late.errors.on_update(0, 150 * kPsPerUs, kIdealPs);
  ASSERT_EQ(late.delivered.size(), 1u);
  EXPECT_EQ(late.delivered[0].deadline_ps, 280 * kPsPerUs);

  Model early({.bias_of_slack = -0.5});
  EXPECT_EQ(early.errors.as_started(flow, kIdealPs).deadline_ps, 70 * kPsPerUs);
  Model tightest({.bias_of_slack = -1.0});  // what the flow needs alone, no more
  EXPECT_EQ(tightest.errors.as_started(flow, kIdealPs).deadline_ps, 30 * kPsPerUs);
}

TEST(TimestampErrors, NoSlackMeansNoErrorAndNoTimestampInThePast) {
  Model m({.bias_of_slack = 1.0, .noise_of_slack = 3.0});
  // The deadline cannot be met even alone: passed exactly.
  const FlowSpec tight = urgent_flow(0, 10 * kPsPerUs, 25 * kPsPerUs);
  EXPECT_EQ(m.errors.as_started(tight, kIdealPs).deadline_ps, 25 * kPsPerUs);
  // Large noise pushes some timestamps before now: they are clamped to now.
  std::size_t clamped = 0;
  for (std::uint32_t id = 1; id < 2000; ++id) {
    const FlowSpec flow = urgent_flow(id, 10 * kPsPerUs, 110 * kPsPerUs);
    const TimePs seen = m.errors.as_started(flow, kIdealPs).deadline_ps;
    ASSERT_GE(seen, flow.start_ps);
    clamped += seen == flow.start_ps ? 1 : 0;
  }
  // P(1 + 3 Z < -1.125) = P(Z < -0.71), about 24%.
  EXPECT_GT(clamped, 300u);
  EXPECT_LT(clamped, 700u);
}

TEST(TimestampErrors, NoiseHasTheConfiguredMeanAndSpread) {
  Model m({.bias_of_slack = 0.25, .noise_of_slack = 0.2});
  constexpr int kFlows = 20000;
  const double slack_ps = 80.0 * kPsPerUs;
  double sum = 0, sum_sq = 0;
  for (std::uint32_t id = 0; id < kFlows; ++id) {
    const FlowSpec flow = urgent_flow(id, 10 * kPsPerUs, 110 * kPsPerUs);
    const double error =
        static_cast<double>(m.errors.as_started(flow, kIdealPs).deadline_ps - flow.deadline_ps) /
        slack_ps;
    sum += error;
    sum_sq += error * error;
  }
  const double mean = sum / kFlows;
  EXPECT_NEAR(mean, 0.25, 0.01);  // sd of the mean ~0.0014
  EXPECT_NEAR(std::sqrt(sum_sq / kFlows - mean * mean), 0.2, 0.01);
}

TEST(TimestampErrors, MissingFractionOneLeavesTheTransportWithoutDeadlines) {
  Model m({.missing_fraction = 1.0});
  const FlowSpec seen = m.errors.as_started(urgent_flow(0, 0, 100 * kPsPerUs), kIdealPs);
  EXPECT_FALSE(seen.has_deadline());
  EXPECT_EQ(seen.flow_class, FlowClass::kUrgent);  // still urgent
  m.errors.on_update(0, 200 * kPsPerUs, kIdealPs);
  EXPECT_TRUE(m.delivered.empty()) << "a flow without timestamp gets no updates";
  EXPECT_EQ(m.errors.counts().flows_without_timestamp, 1u);

  // A fraction: about that share of the flows.
  Model half({.missing_fraction = 0.3});
  std::size_t missing = 0;
  for (std::uint32_t id = 0; id < 5000; ++id) {
    missing +=
        half.errors.as_started(urgent_flow(id, 0, 100 * kPsPerUs), kIdealPs).has_deadline() ? 0 : 1;
  }
  EXPECT_NEAR(static_cast<double>(missing) / 5000, 0.3, 0.03);
}

TEST(TimestampErrors, FlowsWithoutDeadlineAreLeftAlone) {
  Model m({.bias_of_slack = 1.0, .missing_fraction = 1.0});
  FlowSpec background = urgent_flow(0, 0, kTimeNever);
  background.flow_class = FlowClass::kBackground;
  EXPECT_EQ(m.errors.as_started(background, kIdealPs).deadline_ps, kTimeNever);
  EXPECT_EQ(m.errors.counts().flows_with_deadline, 0u);
}

TEST(TimestampErrors, DropProbabilityOneDropsEveryUpdate) {
  Model m({.update_drop_probability = 1.0});
  for (std::uint32_t id = 0; id < 100; ++id) {
    m.errors.as_started(urgent_flow(id, 0, 100 * kPsPerUs), kIdealPs);
    m.errors.on_update(id, 200 * kPsPerUs, kIdealPs);
    m.errors.on_update(id, 300 * kPsPerUs, kIdealPs);
  }
  EXPECT_TRUE(m.delivered.empty());
  EXPECT_EQ(m.errors.counts().updates, 200u);
  EXPECT_EQ(m.errors.counts().updates_dropped, 200u);

  Model some({.update_drop_probability = 0.25});
  for (std::uint32_t id = 0; id < 4000; ++id) some.errors.on_update(id, 200 * kPsPerUs, kIdealPs);
  EXPECT_NEAR(static_cast<double>(some.delivered.size()) / 4000, 0.75, 0.03);
}

TEST(TimestampErrors, DelayedUpdatesArriveLateInTheOrderSent) {
  Model m({.update_delay_ps = 5 * kPsPerUs});
  m.errors.on_update(3, 200 * kPsPerUs, kIdealPs);
  m.errors.on_update(1, 300 * kPsPerUs, kIdealPs);
  m.errors.on_update(3, 250 * kPsPerUs, kIdealPs);
  EXPECT_TRUE(m.delivered.empty()) << "nothing before the delay";
  m.sim.run_until(5 * kPsPerUs - 1);
  EXPECT_TRUE(m.delivered.empty());
  m.sim.run();
  ASSERT_EQ(m.delivered.size(), 3u);
  const std::vector<std::uint32_t> ids = {m.delivered[0].flow_id, m.delivered[1].flow_id,
                                          m.delivered[2].flow_id};
  EXPECT_EQ(ids, (std::vector<std::uint32_t>{3, 1, 3}));
  for (const Delivered& d : m.delivered) EXPECT_EQ(d.at_ps, 5 * kPsPerUs);
  EXPECT_EQ(m.delivered[2].deadline_ps, 250 * kPsPerUs);  // the latest one last
  EXPECT_EQ(m.errors.counts().updates_delayed, 3u);
}

std::vector<TimePs> seen_deadlines(std::uint64_t seed) {
  Model m({.noise_of_slack = 0.5}, seed);
  std::vector<TimePs> seen;
  for (std::uint32_t id = 0; id < 50; ++id) {
    seen.push_back(m.errors.as_started(urgent_flow(id, 0, 100 * kPsPerUs), kIdealPs).deadline_ps);
    m.errors.on_update(id, 200 * kPsPerUs, kIdealPs);
  }
  for (const Delivered& d : m.delivered) seen.push_back(d.deadline_ps);
  return seen;
}

TEST(TimestampErrors, AWaitingConsumerIsPassedExactlyAsAnUpdate) {
  Model late({.bias_of_slack = 1.0});
  late.sim.run_until(50 * kPsPerUs);
  late.errors.on_consumer_waiting(3);
  ASSERT_EQ(late.delivered.size(), 1u);
  EXPECT_EQ(late.delivered[0].flow_id, 3u);
  EXPECT_EQ(late.delivered[0].deadline_ps, 50 * kPsPerUs);  // now: no slack, no error
  EXPECT_EQ(late.errors.counts().consumer_waits, 1u);
  EXPECT_EQ(late.errors.counts().updates, 1u);

  Model lossy({.bias_of_slack = 1.0, .update_drop_probability = 1.0});
  lossy.errors.on_consumer_waiting(3);  // an update like any other
  EXPECT_TRUE(lossy.delivered.empty());
  EXPECT_EQ(lossy.errors.counts().updates_dropped, 1u);

  // Told 70 us (early), the flow is overdue to the transport at 90 us
  // already: "now" would move it later, so nothing is sent.
  Model early({.bias_of_slack = -0.5});
  early.errors.as_started(urgent_flow(0, 10 * kPsPerUs, 110 * kPsPerUs), kIdealPs);
  early.sim.run_until(90 * kPsPerUs);
  early.errors.on_consumer_waiting(0);
  EXPECT_TRUE(early.delivered.empty());
  EXPECT_EQ(early.errors.counts().consumer_waits, 0u);

  Model told_nothing({.bias_of_slack = 1.0, .waiting_updates = false});
  told_nothing.errors.on_consumer_waiting(3);
  Model exact(TimestampErrorModel{});  // the transport already has the truth
  exact.errors.on_consumer_waiting(3);
  EXPECT_TRUE(told_nothing.delivered.empty());
  EXPECT_TRUE(exact.delivered.empty());
  EXPECT_EQ(told_nothing.errors.counts().updates + exact.errors.counts().updates, 0u);
}

TEST(TimestampErrors, SameSeedSameErrorsOtherSeedOthers) {
  EXPECT_EQ(seen_deadlines(7), seen_deadlines(7));
  EXPECT_NE(seen_deadlines(7), seen_deadlines(8));
}

TEST(TimestampErrors, AFlowsErrorsDoNotDependOnOtherFlows) {
  // Keyed by flow and timestamp number, not by the order of draws.
  Model alone({.noise_of_slack = 0.5});
  const TimePs by_itself =
      alone.errors.as_started(urgent_flow(9, 0, 100 * kPsPerUs), kIdealPs).deadline_ps;
  Model crowded({.noise_of_slack = 0.5});
  for (std::uint32_t id = 0; id < 9; ++id) {
    crowded.errors.as_started(urgent_flow(id, 0, 100 * kPsPerUs), kIdealPs);
  }
  EXPECT_EQ(crowded.errors.as_started(urgent_flow(9, 0, 100 * kPsPerUs), kIdealPs).deadline_ps,
            by_itself);
}

// ---- Through a run: the host perturbs, the records keep the truth. ----

// A test workload: registers flows with a deadline of 4 x their ideal FCT,
// keeps the spec the host hands back (what the transport is started with) and
// starts them at once.
struct ProbeFlows {
  int count = 4;
  std::shared_ptr<std::vector<FlowSpec>> seen = std::make_shared<std::vector<FlowSpec>>();
};

class ProbeWorkload final : public Workload {
 public:
  explicit ProbeWorkload(WorkloadHost& host, const ProbeFlows& spec) : host_(host), spec_(spec) {}
  void arm() override {
    for (int i = 0; i < spec_.count; ++i) {
      FlowSpec flow;
      flow.src = 1 + i;
      flow.dst = 0;
      flow.size_bytes = 200'000;
      flow.flow_class = FlowClass::kUrgent;
      const FlowSpec seen = host_.register_flow(flow, {.deadline_factor = 4});
      spec_.seen->push_back(seen);
      host_.transport().start_flow(seen);
    }
  }
  void on_flow_complete(const FlowSpec&, TimePs) override { ++done_; }
  bool measured() const override { return true; }
  bool finished() const override { return done_ == spec_.count; }

 private:
  WorkloadHost& host_;
  ProbeFlows spec_;
  int done_ = 0;
};

std::unique_ptr<Workload> make_workload(const ProbeFlows& spec, WorkloadHost& host) {
  return std::make_unique<ProbeWorkload>(host, spec);
}
std::string describe_workload(const ProbeFlows&) { return "probe flows"; }

TEST(TimestampErrorsInARun, TransportSeesTheShiftedDeadlineRecordsKeepTheTrueOne) {
  for (const double bias : {0.0, 1.0}) {
    ExperimentConfig config = testing::star(5);
    config.transport = "safs";
    config.timestamps.bias_of_slack = bias;
    const ProbeFlows probe = config.workloads.add(ProbeFlows{});
    Experiment e(config);
    e.run();
    ASSERT_TRUE(e.recorder().all_complete());
    ASSERT_EQ(probe.seen->size(), 4u);
    for (const FlowSpec& seen : *probe.seen) {
      const FlowRecord& r = e.recorder().records()[seen.id];
      // The true deadline: start + 4 ideal FCTs, whatever the model did.
      EXPECT_EQ(r.spec.deadline_ps, r.spec.start_ps + 4 * r.ideal_fct_ps);
      const TimePs slack = r.spec.deadline_ps - r.spec.start_ps - r.ideal_fct_ps;
      EXPECT_EQ(seen.deadline_ps, r.spec.deadline_ps + static_cast<TimePs>(bias) * slack);
    }
    // The summary says what the model did, only when it is on.
    const RunReport report = e.report();
    EXPECT_EQ(report.summary_sections.contains("timestamp_errors"), bias != 0);
  }
}

// GPU 1 runs X (5 ms) then B; B needs 20 MB (1.6 ms at 100 Gbit/s) that A on
// GPU 0 sends at 10 us: 3.4 ms of slack. A background chain from host 2 into
// host 1 takes what just in time leaves. Told the timestamp one slack late,
// SAFS plans the transfer to land 3.4 ms after B's true start. When B's GPU
// idles for it the consumer is waiting, and the transport is told so.
struct WaitingRun {
  TimePs b_start_ps;
  nlohmann::ordered_json errors;  // summary.json's timestamp_errors
};
WaitingRun run_late_input(bool waiting_updates, double bias) {
  ComputeGraph g;
  const int a = g.add_op(0, 10 * kPsPerUs, "A");
  g.add_op(1, 5 * kPsPerMs, "X");
  const int b = g.add_op(1, kPsPerMs, "B");
  g.add_transfer(a, b, 20'000'000);
  ExperimentConfig config = testing::star(3);
  config.transport = "safs";
  config.workloads.add(BulkTraffic{{BulkSpec{.src = 2, .dst = 1, .size_bytes = 1 << 30}}});
  config.timestamps.bias_of_slack = bias;
  config.timestamps.waiting_updates = waiting_updates;
  config.workloads.add(std::move(g));
  Experiment e(config);
  e.run();
  const ComputeEngine& c = e.find_workload<ComputeWorkload>()->engine();
  EXPECT_TRUE(c.finished());
  const nlohmann::ordered_json summary = e.report().summary_sections;
  return {c.ops()[b].start_ps,
          summary.contains("timestamp_errors") ? summary["timestamp_errors"] : nullptr};
}

TEST(TimestampErrorsInARun, AWaitingConsumerCutsTheBubbleOfALateTimestamp) {
  const WaitingRun exact = run_late_input(true, 0);
  const WaitingRun told = run_late_input(true, 1);
  const WaitingRun not_told = run_late_input(false, 1);
  // Exact timestamps: B starts on time (its plan, 5 ms), and nothing is watched.
  EXPECT_LE(exact.b_start_ps, 5 * kPsPerMs + 50 * kPsPerUs);
  EXPECT_TRUE(exact.errors.is_null());
  // One slack late and not told: the transfer lands near 8.4 ms.
  EXPECT_GT(not_told.b_start_ps, 8 * kPsPerMs);
  EXPECT_FALSE(not_told.errors.contains("consumer_waits"));
  // Told at 5 ms that B waits: what is left goes at line rate. About 0.4 of
  // the 20 MB is still to come then (5/8.4 sent): 0.65 ms more.
  EXPECT_EQ(told.errors["consumer_waits"], 1);
  EXPECT_LT(told.b_start_ps, 6 * kPsPerMs);
  EXPECT_GT(told.b_start_ps, exact.b_start_ps);
}

TEST(TimestampErrorsInARun, MissingTimestampsStillRecordTheirDeadline) {
  ExperimentConfig config = testing::star(5);
  config.transport = "safs";
  config.timestamps.missing_fraction = 1.0;
  const ProbeFlows probe = config.workloads.add(ProbeFlows{});
  Experiment e(config);
  e.run();
  for (const FlowSpec& seen : *probe.seen) {
    EXPECT_FALSE(seen.has_deadline());
    EXPECT_EQ(seen.flow_class, FlowClass::kUrgent);
    EXPECT_TRUE(e.recorder().records()[seen.id].spec.has_deadline());
  }
  EXPECT_EQ(e.report().summary_sections["timestamp_errors"]["flows_without_timestamp"], 4);
}

}  // namespace
}  // namespace safs
