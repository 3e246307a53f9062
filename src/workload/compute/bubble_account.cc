#include "workload/compute/bubble_account.h"

#include <algorithm>

namespace safs {

namespace {

// Walks the GPU's ops in order. Each op's record says when it started and how
// long it waited; a wait always begins where the previous op ended (or at the
// start), so the waits, the busy time and the tail tile the window.
GpuBubbles account_gpu(const ComputeEngine& engine, int gpu, TimePs window_end_ps) {
  GpuBubbles b;
  TimePs free_since = engine.started_ps();
  bool running = false;
  for (const int op : engine.graph().gpu_order[static_cast<std::size_t>(gpu)]) {
    const OpRecord& r = engine.ops()[static_cast<std::size_t>(op)];
    if (r.start_ps < 0) break;  // never started: the GPU waits for it still
    const TimePs wait_end = std::min(r.start_ps, window_end_ps);
    if (wait_end > free_since) {
      b.idle.push_back({free_since, wait_end, op});
      b.waits_ps += wait_end - free_since;
    }
    if (r.end_ps < 0) {  // running when the run stopped
      b.unfinished_op_ps = std::max<TimePs>(0, window_end_ps - r.start_ps);
      running = true;
      break;
    }
    free_since = r.end_ps;
  }
  if (!running && window_end_ps > free_since) {
    b.idle.push_back({free_since, window_end_ps, -1});
    b.after_last_op_ps = window_end_ps - free_since;
  }
  return b;
}

}  // namespace

BubbleAccount::BubbleAccount(const ComputeEngine& engine) : makespan_ps_(engine.makespan_ps()) {
  const TimePs window_end_ps = engine.started_ps() + makespan_ps_;
  gpus_.reserve(engine.graph().gpu_order.size());
  for (std::size_t g = 0; g < engine.graph().gpu_order.size(); ++g) {
    gpus_.push_back(account_gpu(engine, static_cast<int>(g), window_end_ps));
  }
}

double BubbleAccount::fraction(int gpu) const {
  return makespan_ps_ > 0
             ? static_cast<double>(this->gpu(gpu).total_ps()) / static_cast<double>(makespan_ps_)
             : 0.0;
}

}  // namespace safs
