// Pipeline-parallel training schedules as per-stage op orders, and an
// evaluator that runs those orders with fixed op and transfer times. Pure
// code: no simulator types. The simulator's runtime takes the orders and the
// dependencies from here and enforces them with real transfers.
//
// Ops (ZeroBubble paper, arXiv 2401.10241, and its repository's zb.py):
//   F[s][mb]  forward of microbatch mb on stage s;
//   B[s][mb]  backward for the input gradient (the critical path);
//   W[s][mb]  backward for the weight gradient (no inter-stage traffic).
// GPipe and 1F1B fuse the backward: their orders hold kB ops that stand for
// B and W together (duration t_b + t_w) and no kW ops at all. ZB-H1 and ZB-H2
// keep B and W separate.
//
// Dependencies:
//   F[s][mb] needs F[s-1][mb] (activation transfer from s-1);
//   B[s][mb] needs B[s+1][mb] (gradient transfer from s+1) and F[s][mb]
//            (same stage; at the last stage this is the loss dependency);
//   W[s][mb] needs B[s][mb] (same stage).
// On top of these every op waits for the op before it on its stage.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/time.h"

namespace safs::pipeline {

using safs::TimePs;

enum class Schedule { kGPipe, k1F1B, kZbH1, kZbH2 };

// "gpipe", "1f1b", "zb-h1", "zb-h2"; throws std::invalid_argument otherwise.
Schedule parse_schedule(std::string_view name);
std::string_view to_string(Schedule schedule);

// True for GPipe and 1F1B: one kB op per microbatch carries B and W.
bool fuses_backward(Schedule schedule);

enum class OpKind { kF, kB, kW };

struct Op {
  int stage = 0;
  int microbatch = 0;
  OpKind kind = OpKind::kF;

  friend bool operator==(const Op&, const Op&) = default;
};

struct PipelineSpec {
  int stages = 4;
  int microbatches = 8;
  TimePs t_f = 0;  // forward, per microbatch per stage
  TimePs t_b = 0;  // input-gradient backward
  TimePs t_w = 0;  // weight-gradient backward
  Schedule schedule = Schedule::k1F1B;
};

// Duration of an op of `kind` under `spec` (a fused kB takes t_b + t_w).
TimePs op_duration(const PipelineSpec& spec, OpKind kind);

// The order in which each stage runs its ops ([stage][position]). The orders
// depend only on stages, microbatches and the schedule, never on the times.
//   GPipe: all F in microbatch order, then all (fused) B in reverse
//     microbatch order, as in GPipe's Figure 2(c); with equal per-op times the
//     forward-order variant has the same timeline.
//   1F1B: stage s runs min(p-s-1, m) warm-up F, then alternates F and
//     (fused) B, then cools down with the remaining B.
//   ZB-H1 / ZB-H2 (the paper's handcrafted schedules, built explicitly):
//     stage s runs w_s warm-up F, then for each B in microbatch order: B,
//     and while F remain, the oldest pending W only if the stage already
//     holds `cap` microbatches, then the next F; once the F are exhausted,
//     B and one W alternate; the W still pending run at the end.
//       ZB-H1: w_s = min(p-s, m) (1F1B's warm-up plus its first F),
//              cap = p on every stage (same in-flight count everywhere, never
//              above 1F1B's peak); stage s defers s W to its tail.
//       ZB-H2: w_s = min(2(p-s)-1, m), cap = 2p-1: the extra warm-up F fill
//              the bubble before the first B, and the deferred W make the
//              timeline a parallelogram.
// Throws std::invalid_argument if stages or microbatches < 1.
std::vector<std::vector<Op>> stage_orders(const PipelineSpec& spec);

// The producers of `op` on other stages (each one is a transfer): F[s-1] for
// F (s > 0), B[s+1] for B (s < stages-1), none for W.
std::vector<Op> inputs_from_other_stages(const Op& op, int stages);
// The producers of `op` on its own stage: F[s] for B, B[s] for W, none for F.
std::vector<Op> inputs_on_same_stage(const Op& op);

// Microbatches whose activations a stage holds: counted from its F until its
// W (or its fused B). Peak per stage over the stage's order.
std::vector<int> peak_activations(const std::vector<std::vector<Op>>& orders, Schedule schedule);

struct Timeline {
  // [stage][position in the order]: (start, end).
  std::vector<std::vector<std::pair<TimePs, TimePs>>> op_times;
  TimePs iteration_time = 0;  // makespan, from time 0 to the last op's end
  // iteration_time - busy time of the stage: the planned counterpart of a
  // simulated GPU's bubble (workload/compute/bubble_account.h), named apart
  // because it is a property of the schedule, not of a run.
  std::vector<TimePs> idle_per_stage;
  // (last end - first start) - busy time: idle time inside the stage's own
  // span. This is what the ZB paper calls a stage's bubble (zb.py measures
  // each stage from its first F to its last op); its formulas are the maximum
  // over stages, which is stage 0's.
  std::vector<TimePs> span_idle_per_stage;
  std::vector<TimePs> busy_per_stage;
  std::vector<int> peak_activations;
};

// Runs `orders`: each op starts once the previous op on its stage has ended,
// its same-stage inputs have ended and its cross-stage inputs have ended plus
// `comm_time` (a fixed delay per transfer; 0 = free communication).
// Throws std::invalid_argument if the spec or comm_time is invalid or the
// orders are malformed (a wrong stage, a microbatch out of range, a duplicate
// or missing op, a kW op in a fused-backward schedule), and std::logic_error
// (not std::invalid_argument) if the orders deadlock, i.e. violate the
// dependencies.
Timeline evaluate(const PipelineSpec& spec, const std::vector<std::vector<Op>>& orders,
                  TimePs comm_time = 0);

// One letter per op, "f", "b", "w", like zb.py's printout ("fffbfbw...").
std::string order_string(const std::vector<Op>& order);

}  // namespace safs::pipeline
