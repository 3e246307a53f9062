// Pipeline schedules against the bubble formulas of the ZeroBubble paper
// (arXiv 2401.10241, Table/Section 2), with p stages and m microbatches:
//   GPipe: bubble fraction (p-1)/(m+p-1);
//   1F1B:  (p-1)(T_F+T_B+T_W);
//   ZB-H1: (p-1)(T_F+T_B-T_W), memory <= 1F1B's p;
//   ZB-H2: (p-1)(T_F+T_B-2T_W) floored at 0, memory (2p-1).
// The paper's bubble of a stage is the idle time inside the stage's own span
// (zb.py measures each stage from its first F to its last op) and its
// formulas are the maximum over stages; Timeline::span_idle_per_stage is
// that quantity. Timeline::idle_per_stage measures against the whole
// iteration instead; both are checked. (In the simulator, "bubble" means the
// bubble account of a run; the schedule's figures are named idle.)
#include "workload/pipeline/schedule.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

namespace safs::pipeline {
namespace {

constexpr TimePs kT = kPsPerUs;
constexpr Schedule kAllSchedules[] = {Schedule::kGPipe, Schedule::k1F1B, Schedule::kZbH1,
                                      Schedule::kZbH2};

struct Times {
  TimePs f, b, w;
};
// All with T_W <= min(T_F, T_B): the regime of the paper's handcrafted
// analysis (it assumes T_F = T_B = T_W); see ZbFormulasAssumeShortW.
const std::vector<Times> kTimes = {
    {kT, kT, kT}, {5 * kT, 6 * kT, 4 * kT}, {6 * kT, 5 * kT, 4 * kT}, {3 * kT, 3 * kT, kT}};

// (p, m) with p in {2, 4, 8}, m in {4, 8, 16}, m >= p.
std::vector<std::pair<int, int>> grid() {
  std::vector<std::pair<int, int>> out;
  for (int p : {2, 4, 8}) {
    for (int m : {4, 8, 16}) {
      if (m >= p) out.emplace_back(p, m);
    }
  }
  return out;
}

PipelineSpec make(Schedule schedule, int p, int m, Times t = {kT, kT, kT}) {
  PipelineSpec spec;
  spec.stages = p;
  spec.microbatches = m;
  spec.t_f = t.f;
  spec.t_b = t.b;
  spec.t_w = t.w;
  spec.schedule = schedule;
  return spec;
}

Timeline run(const PipelineSpec& spec, TimePs comm = 0) {
  return evaluate(spec, stage_orders(spec), comm);
}

std::string label(const PipelineSpec& spec) {
  return std::string(to_string(spec.schedule)) + " p=" + std::to_string(spec.stages) +
         " m=" + std::to_string(spec.microbatches) + " F,B,W=" + std::to_string(spec.t_f / kT) +
         "," + std::to_string(spec.t_b / kT) + "," + std::to_string(spec.t_w / kT);
}

TimePs max_of(const std::vector<TimePs>& v) { return *std::max_element(v.begin(), v.end()); }

// evaluate()'s contract, checked independently: every op starts exactly when
// its stage is free and its inputs are ready (cross-stage inputs + comm).
void expect_consistent(const PipelineSpec& spec, const std::vector<std::vector<Op>>& orders,
                       const Timeline& tl, TimePs comm) {
  std::map<std::tuple<int, int, int>, TimePs> end;
  for (std::size_t s = 0; s < orders.size(); ++s) {
    for (std::size_t i = 0; i < orders[s].size(); ++i) {
      const Op& op = orders[s][i];
      end[{static_cast<int>(op.kind), op.stage, op.microbatch}] = tl.op_times[s][i].second;
    }
  }
  auto end_of = [&](const Op& op) {
    return end.at({static_cast<int>(op.kind), op.stage, op.microbatch});
  };
  TimePs makespan = 0;
  for (std::size_t s = 0; s < orders.size(); ++s) {
    ASSERT_EQ(tl.op_times[s].size(), orders[s].size());
    for (std::size_t i = 0; i < orders[s].size(); ++i) {
      const Op& op = orders[s][i];
      TimePs ready = i == 0 ? 0 : tl.op_times[s][i - 1].second;
      for (const Op& in : inputs_on_same_stage(op)) ready = std::max(ready, end_of(in));
      for (const Op& in : inputs_from_other_stages(op, spec.stages)) {
        ready = std::max(ready, end_of(in) + comm);
      }
      EXPECT_EQ(tl.op_times[s][i].first, ready) << label(spec) << " stage " << s << " op " << i;
      EXPECT_EQ(tl.op_times[s][i].second - tl.op_times[s][i].first, op_duration(spec, op.kind));
      makespan = std::max(makespan, tl.op_times[s][i].second);
    }
  }
  EXPECT_EQ(tl.iteration_time, makespan);
}

TEST(PipelineSchedule, ParsesAndPrintsNames) {
  for (Schedule s : kAllSchedules) EXPECT_EQ(parse_schedule(to_string(s)), s);
  EXPECT_EQ(parse_schedule("zb-h2"), Schedule::kZbH2);
  EXPECT_EQ(to_string(Schedule::k1F1B), "1f1b");
  EXPECT_THROW(parse_schedule("zb-h3"), std::invalid_argument);
  EXPECT_THROW(parse_schedule(""), std::invalid_argument);
  EXPECT_TRUE(fuses_backward(Schedule::kGPipe));
  EXPECT_TRUE(fuses_backward(Schedule::k1F1B));
  EXPECT_FALSE(fuses_backward(Schedule::kZbH1));
  EXPECT_FALSE(fuses_backward(Schedule::kZbH2));
}

TEST(PipelineSchedule, FusedBackwardCarriesBAndW) {
  const PipelineSpec fused = make(Schedule::k1F1B, 4, 8, {5 * kT, 6 * kT, 4 * kT});
  EXPECT_EQ(op_duration(fused, OpKind::kB), 10 * kT);
  const PipelineSpec split = make(Schedule::kZbH1, 4, 8, {5 * kT, 6 * kT, 4 * kT});
  EXPECT_EQ(op_duration(split, OpKind::kB), 6 * kT);
  EXPECT_EQ(op_duration(split, OpKind::kW), 4 * kT);
}

TEST(PipelineSchedule, CrossStageInputs) {
  using V = std::vector<Op>;
  EXPECT_EQ(inputs_from_other_stages({0, 3, OpKind::kF}, 4), V{});
  EXPECT_EQ(inputs_from_other_stages({2, 3, OpKind::kF}, 4), (V{{1, 3, OpKind::kF}}));
  EXPECT_EQ(inputs_from_other_stages({2, 3, OpKind::kB}, 4), (V{{3, 3, OpKind::kB}}));
  EXPECT_EQ(inputs_from_other_stages({3, 3, OpKind::kB}, 4), V{});
  EXPECT_EQ(inputs_from_other_stages({1, 3, OpKind::kW}, 4), V{});
  EXPECT_EQ(inputs_on_same_stage({3, 5, OpKind::kB}), (V{{3, 5, OpKind::kF}}));
  EXPECT_EQ(inputs_on_same_stage({1, 5, OpKind::kW}), (V{{1, 5, OpKind::kB}}));
  EXPECT_EQ(inputs_on_same_stage({1, 5, OpKind::kF}), V{});
}

// Every op of every microbatch exactly once per stage, F/B/W each in
// microbatch order (GPipe's B in reverse), and the orders run without
// deadlock, including m < p and a single stage.
TEST(PipelineSchedule, EveryOpOnceAndOrdersRun) {
  for (Schedule schedule : kAllSchedules) {
    for (int p : {1, 2, 3, 4, 8}) {
      for (int m : {1, 2, 3, 4, 5, 8, 16}) {
        const PipelineSpec spec = make(schedule, p, m, {5 * kT, 6 * kT, 4 * kT});
        const auto orders = stage_orders(spec);
        ASSERT_EQ(orders.size(), static_cast<std::size_t>(p));
        for (int s = 0; s < p; ++s) {
          std::vector<std::vector<int>> mbs(3);
          for (const Op& op : orders[static_cast<std::size_t>(s)]) {
            EXPECT_EQ(op.stage, s);
            mbs[static_cast<std::size_t>(op.kind)].push_back(op.microbatch);
          }
          std::vector<int> ascending(static_cast<std::size_t>(m));
          for (int i = 0; i < m; ++i) ascending[static_cast<std::size_t>(i)] = i;
          std::vector<int> descending(ascending.rbegin(), ascending.rend());
          EXPECT_EQ(mbs[0], ascending) << label(spec) << " stage " << s;
          EXPECT_EQ(mbs[1], schedule == Schedule::kGPipe ? descending : ascending)
              << label(spec) << " stage " << s;
          EXPECT_EQ(mbs[2], fuses_backward(schedule) ? std::vector<int>{} : ascending)
              << label(spec) << " stage " << s;
        }
        Timeline tl;
        ASSERT_NO_THROW(tl = evaluate(spec, orders)) << label(spec);
        expect_consistent(spec, orders, tl, 0);
      }
    }
  }
}

// F passes before the first B on stage s: 1F1B's p-s-1 warm-up plus its
// first steady F; ZB-H1 the same; ZB-H2 the extra warm-up, 2(p-s)-1.
TEST(PipelineSchedule, WarmupForwards) {
  for (auto [p, m] : grid()) {
    for (Schedule schedule : {Schedule::k1F1B, Schedule::kZbH1, Schedule::kZbH2}) {
      const auto orders = stage_orders(make(schedule, p, m));
      for (int s = 0; s < p; ++s) {
        const std::string letters = order_string(orders[static_cast<std::size_t>(s)]);
        const int leading_f = static_cast<int>(letters.find('b'));
        const int expected = schedule == Schedule::kZbH2 ? std::min(2 * (p - s) - 1, m) : p - s;
        EXPECT_EQ(leading_f, expected)
            << to_string(schedule) << " p=" << p << " m=" << m << " s=" << s;
      }
    }
  }
}

// The shapes for p = 4, m = 8 (compare the ZB paper's Figure 3).
TEST(PipelineSchedule, HandcraftedPatterns) {
  auto letters = [](Schedule schedule) {
    std::vector<std::string> out;
    for (const auto& order : stage_orders(make(schedule, 4, 8))) out.push_back(order_string(order));
    return out;
  };
  EXPECT_EQ(letters(Schedule::k1F1B),
            (std::vector<std::string>{"ffffbfbfbfbfbbbb", "fffbfbfbfbfbfbbb", "ffbfbfbfbfbfbfbb",
                                      "fbfbfbfbfbfbfbfb"}));
  EXPECT_EQ(letters(Schedule::kZbH1),
            (std::vector<std::string>{"ffffbwfbwfbwfbwfbwbwbwbw", "fffbfbwfbwfbwfbwfbwbwbww",
                                      "ffbfbfbwfbwfbwfbwfbwbwww", "fbfbfbfbwfbwfbwfbwfbwwww"}));
  EXPECT_EQ(letters(Schedule::kZbH2),
            (std::vector<std::string>{"fffffffbwfbwbwbwbwbwbwbw", "fffffbfbfbwfbwbwbwbwbwww",
                                      "fffbfbfbfbfbwfbwbwbwwwww", "fbfbfbfbfbfbfbwfbwwwwwww"}));
}

// GPipe with a fused backward T_B' = T_B + T_W: iteration (m+p-1)(T_F+T_B'),
// so every stage idles (p-1)(T_F+T_B+T_W), a fraction (p-1)/(m+p-1).
TEST(PipelineSchedule, GPipeBubbleFraction) {
  for (const Times& t : kTimes) {
    for (auto [p, m] : grid()) {
      const PipelineSpec spec = make(Schedule::kGPipe, p, m, t);
      const Timeline tl = run(spec);
      const TimePs per_mb = t.f + t.b + t.w;
      EXPECT_EQ(tl.iteration_time, (m + p - 1) * per_mb) << label(spec);
      for (int s = 0; s < p; ++s) {
        const TimePs bubble = tl.idle_per_stage[static_cast<std::size_t>(s)];
        EXPECT_EQ(bubble, (p - 1) * per_mb) << label(spec) << " s=" << s;
        // bubble / iteration == (p-1)/(m+p-1), exactly.
        EXPECT_EQ(bubble * (m + p - 1), tl.iteration_time * (p - 1)) << label(spec);
      }
    }
  }
}

// 1F1B: (p-1)(T_F+T_B+T_W) on every stage against the iteration; inside its
// own span stage s idles (p-1-s)(T_F+T_B+T_W), the maximum being stage 0's.
TEST(PipelineSchedule, OneFOneBBubble) {
  for (const Times& t : kTimes) {
    for (auto [p, m] : grid()) {
      const PipelineSpec spec = make(Schedule::k1F1B, p, m, t);
      const Timeline tl = run(spec);
      const TimePs formula = (p - 1) * (t.f + t.b + t.w);
      for (int s = 0; s < p; ++s) {
        EXPECT_EQ(tl.idle_per_stage[static_cast<std::size_t>(s)], formula) << label(spec);
        EXPECT_EQ(tl.span_idle_per_stage[static_cast<std::size_t>(s)],
                  (p - 1 - s) * (t.f + t.b + t.w))
            << label(spec) << " s=" << s;
      }
      EXPECT_EQ(max_of(tl.span_idle_per_stage), formula);
    }
  }
}

// ZB-H1: (p-1)(T_F+T_B-T_W), on every stage against the iteration (the last
// stage's deferred W fill the tail), and stage 0's own span.
TEST(PipelineSchedule, ZbH1Bubble) {
  for (const Times& t : kTimes) {
    for (auto [p, m] : grid()) {
      const PipelineSpec spec = make(Schedule::kZbH1, p, m, t);
      const Timeline tl = run(spec);
      const TimePs formula = (p - 1) * (t.f + t.b - t.w);
      for (int s = 0; s < p; ++s) {
        EXPECT_EQ(tl.idle_per_stage[static_cast<std::size_t>(s)], formula) << label(spec);
        EXPECT_EQ(tl.span_idle_per_stage[static_cast<std::size_t>(s)],
                  (p - 1 - s) * (t.f + t.b - t.w))
            << label(spec) << " s=" << s;
      }
      EXPECT_EQ(max_of(tl.span_idle_per_stage), formula) << label(spec);
      EXPECT_LT(formula,
                run(make(Schedule::k1F1B, p, m, t)).iteration_time - m * (t.f + t.b + t.w));
    }
  }
}

// ZB-H2 with m >= 2p-1: every stage's span holds (p-1-s)(T_F+T_B-2T_W)+ of
// idle time, so the paper's bubble is max(0, (p-1)(T_F+T_B-2T_W)). The
// stages start (p-1)T_F apart at most (parallelogram), so against the
// iteration the bubble is max of that and (p-1)T_F.
TEST(PipelineSchedule, ZbH2Bubble) {
  std::vector<Times> times = kTimes;
  times.push_back({6 * kT, 2 * kT, 5 * kT});  // T_F+T_B-2T_W < 0: floored at 0
  for (const Times& t : times) {
    for (auto [p, m] : grid()) {
      if (m < 2 * p - 1) continue;
      const PipelineSpec spec = make(Schedule::kZbH2, p, m, t);
      const Timeline tl = run(spec);
      const TimePs formula = std::max<TimePs>(0, (p - 1) * (t.f + t.b - 2 * t.w));
      for (int s = 0; s < p; ++s) {
        EXPECT_EQ(tl.span_idle_per_stage[static_cast<std::size_t>(s)],
                  formula / (p - 1) * (p - 1 - s))
            << label(spec) << " s=" << s;
        EXPECT_EQ(tl.idle_per_stage[static_cast<std::size_t>(s)], std::max(formula, (p - 1) * t.f))
            << label(spec);
      }
      EXPECT_EQ(max_of(tl.span_idle_per_stage), formula) << label(spec);
    }
  }
}

TEST(PipelineSchedule, ZbH2ZeroBubbleWithEqualTimes) {
  for (auto [p, m] : grid()) {
    if (m < 2 * p - 1) continue;
    const Timeline tl = run(make(Schedule::kZbH2, p, m));
    EXPECT_EQ(max_of(tl.span_idle_per_stage), 0) << "p=" << p << " m=" << m;
    EXPECT_EQ(tl.iteration_time, (3 * m + p - 1) * kT);
  }
}

// With p <= m < 2p-1 stage 0 runs out of F before the first B returns, so
// ZB-H2 cannot reach its formula; it stays between the H2 and H1 formulas.
TEST(PipelineSchedule, ZbH2WithFewMicrobatches) {
  for (const Times& t : kTimes) {
    for (int p : {4, 8}) {
      for (int m = p; m < 2 * p - 1; ++m) {
        const PipelineSpec spec = make(Schedule::kZbH2, p, m, t);
        const Timeline h2 = run(spec);
        const Timeline h1 = run(make(Schedule::kZbH1, p, m, t));
        const TimePs h2_formula = std::max<TimePs>(0, (p - 1) * (t.f + t.b - 2 * t.w));
        EXPECT_GE(max_of(h2.span_idle_per_stage), h2_formula) << label(spec);
        EXPECT_LE(max_of(h2.span_idle_per_stage), (p - 1) * (t.f + t.b - t.w)) << label(spec);
        EXPECT_LE(h2.iteration_time, h1.iteration_time) << label(spec);
      }
    }
  }
}

// The handcrafted formulas assume W fits in the gaps F and B leave; with
// T_W > T_F the same orders idle more than the formulas (the paper turns to
// its automatic scheduler for real, unequal times), yet still beat 1F1B.
TEST(PipelineSchedule, ZbFormulasAssumeShortW) {
  const Times t{4 * kT, 6 * kT, 5 * kT};
  for (auto [p, m] : grid()) {
    if (m < 2 * p - 1) continue;
    const TimePs h1 = max_of(run(make(Schedule::kZbH1, p, m, t)).span_idle_per_stage);
    const TimePs h2 = max_of(run(make(Schedule::kZbH2, p, m, t)).span_idle_per_stage);
    const TimePs one_f_one_b = max_of(run(make(Schedule::k1F1B, p, m, t)).span_idle_per_stage);
    EXPECT_GT(h1, (p - 1) * (t.f + t.b - t.w));
    EXPECT_GT(h2, std::max<TimePs>(0, (p - 1) * (t.f + t.b - 2 * t.w)));
    EXPECT_LT(h2, h1);
    EXPECT_LT(h1, one_f_one_b);
  }
}

TEST(PipelineSchedule, PeakActivations) {
  for (auto [p, m] : grid()) {
    const auto gpipe =
        peak_activations(stage_orders(make(Schedule::kGPipe, p, m)), Schedule::kGPipe);
    const auto one_f_one_b = run(make(Schedule::k1F1B, p, m)).peak_activations;
    const auto h1 = run(make(Schedule::kZbH1, p, m)).peak_activations;
    const auto h2 = run(make(Schedule::kZbH2, p, m)).peak_activations;
    for (int s = 0; s < p; ++s) {
      const auto i = static_cast<std::size_t>(s);
      EXPECT_EQ(gpipe[i], m);
      EXPECT_EQ(one_f_one_b[i], std::min(p - s, m)) << "p=" << p << " m=" << m << " s=" << s;
      // Every ZB-H1 stage holds as many as 1F1B's first stage, never more.
      EXPECT_EQ(h1[i], std::min(p, m));
      EXPECT_LE(h2[i], 2 * p - 1);
    }
    EXPECT_LE(*std::max_element(h1.begin(), h1.end()),
              *std::max_element(one_f_one_b.begin(), one_f_one_b.end()));
    EXPECT_EQ(h2[0], std::min(2 * p - 1, m));
    if (m >= 2 * p - 1) {
      EXPECT_GT(h2[0], one_f_one_b[0]);
    }
  }
}

TEST(PipelineSchedule, CommunicationLengthensIteration) {
  const TimePs comm = kT / 2;
  for (Schedule schedule : kAllSchedules) {
    for (const Times& t : kTimes) {
      for (auto [p, m] : grid()) {
        const PipelineSpec spec = make(schedule, p, m, t);
        const auto orders = stage_orders(spec);
        const Timeline free_comm = evaluate(spec, orders);
        const Timeline slow = evaluate(spec, orders, comm);
        expect_consistent(spec, orders, slow, comm);
        EXPECT_GT(slow.iteration_time, free_comm.iteration_time) << label(spec);
        if (schedule == Schedule::kGPipe) {
          // A stream of F then B: the fill and the drain each pay p-1 hops.
          EXPECT_EQ(slow.iteration_time, free_comm.iteration_time + 2 * (p - 1) * comm);
        }
      }
    }
  }
  const PipelineSpec single = make(Schedule::kZbH1, 1, 4);
  EXPECT_EQ(run(single, comm).iteration_time, run(single).iteration_time);
  EXPECT_EQ(run(single).iteration_time, 12 * kT);
}

// An order that violates the dependencies never finishes: a logic_error,
// and not the invalid_argument of a malformed order.
TEST(PipelineSchedule, DeadlockIsALogicError) {
  auto expect_deadlock = [](const PipelineSpec& spec, const std::vector<std::vector<Op>>& orders) {
    try {
      evaluate(spec, orders);
      ADD_FAILURE() << "no deadlock detected";
    } catch (const std::invalid_argument& e) {
      ADD_FAILURE() << "reported as malformed: " << e.what();
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find("deadlock"), std::string::npos);
    }
  };
  const PipelineSpec spec = make(Schedule::k1F1B, 4, 8);
  auto orders = stage_orders(spec);
  // Stage 0 starts with B0, which waits (through stages 1-3) for its own F0.
  std::rotate(orders[0].begin(), orders[0].begin() + 4, orders[0].begin() + 5);
  ASSERT_EQ(order_string(orders[0]).substr(0, 5), "bffff");
  expect_deadlock(spec, orders);

  // W before its own B on one stage.
  const PipelineSpec zb = make(Schedule::kZbH1, 4, 8);
  auto zb_orders = stage_orders(zb);
  auto& last = zb_orders[3];
  const auto w0 = std::find(last.begin(), last.end(), Op{3, 0, OpKind::kW});
  std::rotate(last.begin(), w0, w0 + 1);
  expect_deadlock(zb, zb_orders);

  // B0 before F0 on the last stage (the loss needs the forward).
  auto cyclic = stage_orders(spec);
  std::swap(cyclic[3][0], cyclic[3][1]);
  expect_deadlock(spec, cyclic);

  // A reordering that only delays is not a deadlock: F1 does not need F0.
  auto swapped = stage_orders(spec);
  std::swap(swapped[1][0], swapped[1][1]);
  std::swap(swapped[2][0], swapped[2][1]);
  EXPECT_NO_THROW(evaluate(spec, swapped));
}

TEST(PipelineSchedule, MalformedOrdersAreRejected) {
  const PipelineSpec spec = make(Schedule::k1F1B, 3, 4);
  auto missing = stage_orders(spec);
  missing[1].pop_back();
  EXPECT_THROW(evaluate(spec, missing), std::invalid_argument);
  auto duplicate = stage_orders(spec);
  duplicate[1].back() = duplicate[1].front();
  EXPECT_THROW(evaluate(spec, duplicate), std::invalid_argument);
  auto wrong_stage = stage_orders(spec);
  wrong_stage[1][0].stage = 2;
  EXPECT_THROW(evaluate(spec, wrong_stage), std::invalid_argument);
  auto out_of_range = stage_orders(spec);
  out_of_range[0][0].microbatch = 4;
  EXPECT_THROW(evaluate(spec, out_of_range), std::invalid_argument);
  auto with_w = stage_orders(spec);
  with_w[0].push_back({0, 0, OpKind::kW});
  EXPECT_THROW(evaluate(spec, with_w), std::invalid_argument);  // 1F1B fuses W into B
  auto zb = stage_orders(make(Schedule::kZbH1, 3, 4));
  EXPECT_THROW(evaluate(spec, zb), std::invalid_argument);  // ZB orders under a fused spec
  EXPECT_THROW(evaluate(spec, {}), std::invalid_argument);
  EXPECT_THROW(evaluate(spec, stage_orders(spec), -1), std::invalid_argument);
  EXPECT_THROW(stage_orders(make(Schedule::k1F1B, 0, 4)), std::invalid_argument);
  EXPECT_THROW(stage_orders(make(Schedule::k1F1B, 4, 0)), std::invalid_argument);
  PipelineSpec negative = spec;
  negative.t_w = -1;
  EXPECT_THROW(evaluate(negative, stage_orders(spec)), std::invalid_argument);
}

}  // namespace
}  // namespace safs::pipeline
