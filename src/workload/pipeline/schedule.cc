#include "workload/pipeline/schedule.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace safs::pipeline {
namespace {

std::size_t idx(int i) { return static_cast<std::size_t>(i); }

int kind_index(OpKind kind) { return static_cast<int>(kind); }

char kind_letter(OpKind kind) {
  switch (kind) {
    case OpKind::kF:
      return 'f';
    case OpKind::kB:
      return 'b';
    case OpKind::kW:
      return 'w';
  }
  return '?';
}

std::string describe(const Op& op) {
  return std::string(1, kind_letter(op.kind)) + "[stage " + std::to_string(op.stage) + "][mb " +
         std::to_string(op.microbatch) + "]";
}

void check_shape(const PipelineSpec& spec) {
  if (spec.stages < 1) throw std::invalid_argument("pipeline: stages must be >= 1");
  if (spec.microbatches < 1) throw std::invalid_argument("pipeline: microbatches must be >= 1");
}

std::vector<Op> gpipe_order(int stage, int m) {
  std::vector<Op> order;
  for (int mb = 0; mb < m; ++mb) order.push_back({stage, mb, OpKind::kF});
  for (int mb = m - 1; mb >= 0; --mb) order.push_back({stage, mb, OpKind::kB});
  return order;
}

std::vector<Op> one_f_one_b_order(int stage, int p, int m) {
  std::vector<Op> order;
  const int warmup = std::min(p - stage - 1, m);
  int f = 0;
  int b = 0;
  while (f < warmup) order.push_back({stage, f++, OpKind::kF});
  while (f < m) {
    order.push_back({stage, f++, OpKind::kF});
    order.push_back({stage, b++, OpKind::kB});
  }
  while (b < m) order.push_back({stage, b++, OpKind::kB});
  return order;
}

// The ZB handcrafted pattern: `warmup` F, then each B followed (while F
// remain) by the next F, with the oldest pending W first whenever the stage
// already holds `cap` microbatches; after the last F each B is followed by a
// W; the deferred W close the order. Requires 1 <= warmup <= cap.
std::vector<Op> zero_bubble_order(int stage, int m, int warmup, int cap) {
  std::vector<Op> order;
  int f = 0;
  int b = 0;
  int w = 0;
  while (f < warmup) order.push_back({stage, f++, OpKind::kF});
  while (b < m) {
    order.push_back({stage, b++, OpKind::kB});
    if (f < m) {
      if (f - w >= cap && w < b) order.push_back({stage, w++, OpKind::kW});
      order.push_back({stage, f++, OpKind::kF});
    } else if (w < b) {
      order.push_back({stage, w++, OpKind::kW});
    }
  }
  while (w < m) order.push_back({stage, w++, OpKind::kW});
  return order;
}

}  // namespace

Schedule parse_schedule(std::string_view name) {
  if (name == "gpipe") return Schedule::kGPipe;
  if (name == "1f1b") return Schedule::k1F1B;
  if (name == "zb-h1") return Schedule::kZbH1;
  if (name == "zb-h2") return Schedule::kZbH2;
  throw std::invalid_argument("pipeline: unknown schedule '" + std::string(name) +
                              "' (expected gpipe, 1f1b, zb-h1 or zb-h2)");
}

std::string_view to_string(Schedule schedule) {
  switch (schedule) {
    case Schedule::kGPipe:
      return "gpipe";
    case Schedule::k1F1B:
      return "1f1b";
    case Schedule::kZbH1:
      return "zb-h1";
    case Schedule::kZbH2:
      return "zb-h2";
  }
  return "?";
}

bool fuses_backward(Schedule schedule) {
  return schedule == Schedule::kGPipe || schedule == Schedule::k1F1B;
}

TimePs op_duration(const PipelineSpec& spec, OpKind kind) {
  switch (kind) {
    case OpKind::kF:
      return spec.t_f;
    case OpKind::kB:
      return fuses_backward(spec.schedule) ? spec.t_b + spec.t_w : spec.t_b;
    case OpKind::kW:
      return spec.t_w;
  }
  return 0;
}

std::vector<std::vector<Op>> stage_orders(const PipelineSpec& spec) {
  check_shape(spec);
  const int p = spec.stages;
  const int m = spec.microbatches;
  std::vector<std::vector<Op>> orders;
  orders.reserve(idx(p));
  for (int s = 0; s < p; ++s) {
    switch (spec.schedule) {
      case Schedule::kGPipe:
        orders.push_back(gpipe_order(s, m));
        break;
      case Schedule::k1F1B:
        orders.push_back(one_f_one_b_order(s, p, m));
        break;
      case Schedule::kZbH1:
        orders.push_back(zero_bubble_order(s, m, std::min(p - s, m), p));
        break;
      case Schedule::kZbH2:
        orders.push_back(zero_bubble_order(s, m, std::min(2 * (p - s) - 1, m), 2 * p - 1));
        break;
    }
  }
  return orders;
}

std::vector<Op> inputs_from_other_stages(const Op& op, int stages) {
  switch (op.kind) {
    case OpKind::kF:
      if (op.stage > 0) return {{op.stage - 1, op.microbatch, OpKind::kF}};
      return {};
    case OpKind::kB:
      if (op.stage < stages - 1) return {{op.stage + 1, op.microbatch, OpKind::kB}};
      return {};
    case OpKind::kW:
      return {};
  }
  return {};
}

std::vector<Op> inputs_on_same_stage(const Op& op) {
  switch (op.kind) {
    case OpKind::kF:
      return {};
    case OpKind::kB:
      return {{op.stage, op.microbatch, OpKind::kF}};
    case OpKind::kW:
      return {{op.stage, op.microbatch, OpKind::kB}};
  }
  return {};
}

std::vector<int> peak_activations(const std::vector<std::vector<Op>>& orders, Schedule schedule) {
  const OpKind release = fuses_backward(schedule) ? OpKind::kB : OpKind::kW;
  std::vector<int> peaks;
  peaks.reserve(orders.size());
  for (const std::vector<Op>& order : orders) {
    int held = 0;
    int peak = 0;
    for (const Op& op : order) {
      if (op.kind == OpKind::kF) ++held;
      if (op.kind == release) --held;
      peak = std::max(peak, held);
    }
    peaks.push_back(peak);
  }
  return peaks;
}

Timeline evaluate(const PipelineSpec& spec, const std::vector<std::vector<Op>>& orders,
                  TimePs comm_time) {
  check_shape(spec);
  if (spec.t_f < 0 || spec.t_b < 0 || spec.t_w < 0) {
    throw std::invalid_argument("pipeline: op times must be >= 0");
  }
  if (comm_time < 0) throw std::invalid_argument("pipeline: comm_time must be >= 0");
  const int p = spec.stages;
  const int m = spec.microbatches;
  const bool fused = fuses_backward(spec.schedule);
  if (orders.size() != idx(p)) {
    throw std::invalid_argument("pipeline: expected " + std::to_string(p) + " stage orders, got " +
                                std::to_string(orders.size()));
  }

  // end[kind][stage][mb]; -1 until the op has run. Also validates the orders.
  constexpr TimePs kNotRun = -1;
  std::array<std::vector<std::vector<TimePs>>, 3> end;
  for (auto& per_kind : end) per_kind.assign(idx(p), std::vector<TimePs>(idx(m), kNotRun));
  std::array<std::vector<std::vector<char>>, 3> seen;
  for (auto& per_kind : seen) per_kind.assign(idx(p), std::vector<char>(idx(m), 0));
  for (int s = 0; s < p; ++s) {
    for (const Op& op : orders[idx(s)]) {
      if (op.stage != s) {
        throw std::invalid_argument("pipeline: " + describe(op) + " is in stage " +
                                    std::to_string(s) + "'s order");
      }
      if (op.microbatch < 0 || op.microbatch >= m) {
        throw std::invalid_argument("pipeline: " + describe(op) + ": microbatch out of range");
      }
      if (fused && op.kind == OpKind::kW) {
        throw std::invalid_argument("pipeline: " + describe(op) + ": " +
                                    std::string(to_string(spec.schedule)) +
                                    " fuses W into B and has no W ops");
      }
      char& mark = seen[idx(kind_index(op.kind))][idx(s)][idx(op.microbatch)];
      if (mark) throw std::invalid_argument("pipeline: " + describe(op) + " appears twice");
      mark = 1;
    }
    for (int k = 0; k < (fused ? 2 : 3); ++k) {
      for (int mb = 0; mb < m; ++mb) {
        if (!seen[idx(k)][idx(s)][idx(mb)]) {
          throw std::invalid_argument("pipeline: " + describe({s, mb, static_cast<OpKind>(k)}) +
                                      " is missing");
        }
      }
    }
  }

  Timeline timeline;
  timeline.op_times.resize(idx(p));
  timeline.busy_per_stage.assign(idx(p), 0);
  std::vector<std::size_t> next(idx(p), 0);
  std::vector<TimePs> free_at(idx(p), 0);
  std::size_t remaining = 0;
  for (const auto& order : orders) remaining += order.size();

  auto end_of = [&](const Op& op) -> TimePs& {
    return end[idx(kind_index(op.kind))][idx(op.stage)][idx(op.microbatch)];
  };

  // Each pass runs every stage as far as its inputs allow; a pass that runs
  // nothing while ops remain means every stage waits on an op that can never
  // run: the orders deadlock.
  while (remaining > 0) {
    bool progressed = false;
    for (int s = 0; s < p; ++s) {
      const std::vector<Op>& order = orders[idx(s)];
      while (next[idx(s)] < order.size()) {
        const Op& op = order[next[idx(s)]];
        TimePs start = free_at[idx(s)];
        bool ready = true;
        for (const Op& in : inputs_on_same_stage(op)) {
          const TimePs t = end_of(in);
          if (t == kNotRun) ready = false;
          start = std::max(start, t);
        }
        for (const Op& in : inputs_from_other_stages(op, p)) {
          const TimePs t = end_of(in);
          if (t == kNotRun) ready = false;
          start = std::max(start, t + comm_time);
        }
        if (!ready) break;
        const TimePs duration = op_duration(spec, op.kind);
        end_of(op) = start + duration;
        free_at[idx(s)] = start + duration;
        timeline.busy_per_stage[idx(s)] += duration;
        timeline.op_times[idx(s)].emplace_back(start, start + duration);
        ++next[idx(s)];
        --remaining;
        progressed = true;
      }
    }
    if (!progressed) {
      std::string blocked;
      for (int s = 0; s < p; ++s) {
        if (next[idx(s)] < orders[idx(s)].size()) {
          blocked += (blocked.empty() ? "" : ", ") + describe(orders[idx(s)][next[idx(s)]]);
        }
      }
      throw std::logic_error("pipeline: the orders deadlock; blocked: " + blocked);
    }
  }

  timeline.idle_per_stage.resize(idx(p));
  timeline.span_idle_per_stage.resize(idx(p));
  for (int s = 0; s < p; ++s) {
    const auto& times = timeline.op_times[idx(s)];
    if (!times.empty())
      timeline.iteration_time = std::max(timeline.iteration_time, times.back().second);
  }
  for (int s = 0; s < p; ++s) {
    const auto& times = timeline.op_times[idx(s)];
    const TimePs busy = timeline.busy_per_stage[idx(s)];
    timeline.idle_per_stage[idx(s)] = timeline.iteration_time - busy;
    timeline.span_idle_per_stage[idx(s)] =
        times.empty() ? 0 : times.back().second - times.front().first - busy;
  }
  timeline.peak_activations = peak_activations(orders, spec.schedule);
  return timeline;
}

std::string order_string(const std::vector<Op>& order) {
  std::string letters;
  letters.reserve(order.size());
  for (const Op& op : order) letters.push_back(kind_letter(op.kind));
  return letters;
}

}  // namespace safs::pipeline
