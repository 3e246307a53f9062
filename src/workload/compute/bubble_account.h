// One account of a computation's bubbles, used by every output (summary.json,
// steps.csv, the timeline trace). A GPU's bubble is the part of the
// computation's window, from its start to the end of its last finished op
// (the makespan), in which the GPU ran no finished op: makespan - busy. The
// account splits it, exactly in integer picoseconds, into
//   waits          idle before an op, from the end of the GPU's previous op
//                  (or the start) until the op's inputs had arrived: each op's
//                  wait in ops.csv;
//   after last op  from the end of the GPU's last op to the makespan, while
//                  other GPUs still compute;
//   unfinished op  only in a run stopped before the computation finished: the
//                  window time an op still running at the stop had run
//                  (busy time counts finished ops only).
// In a stopped run, a wait that reaches past the makespan counts only up to
// it, and a GPU waiting for an op that never started counts that wait as
// after its last op.
#pragma once

#include <cstddef>
#include <vector>

#include "base/time.h"
#include "workload/compute/compute_engine.h"

namespace safs {

// A stretch of time the GPU idled: a wait, or the idle after its last op.
struct IdleSlice {
  TimePs from_ps = 0;
  TimePs to_ps = 0;
  int before_op = -1;  // the op it waited for; -1: after the GPU's last op
  TimePs length_ps() const { return to_ps - from_ps; }
};

struct GpuBubbles {
  std::vector<IdleSlice> idle;  // in time order; waits and after last op
  TimePs waits_ps = 0;
  TimePs after_last_op_ps = 0;
  TimePs unfinished_op_ps = 0;
  TimePs total_ps() const { return waits_ps + after_last_op_ps + unfinished_op_ps; }
};

class BubbleAccount {
 public:
  explicit BubbleAccount(const ComputeEngine& engine);

  std::size_t gpus() const { return gpus_.size(); }
  const GpuBubbles& gpu(int gpu) const { return gpus_[static_cast<std::size_t>(gpu)]; }
  TimePs makespan_ps() const { return makespan_ps_; }
  // The GPU's bubble over the makespan; 0 when nothing finished.
  double fraction(int gpu) const;

 private:
  TimePs makespan_ps_ = 0;
  std::vector<GpuBubbles> gpus_;
};

}  // namespace safs
