// A computation's timeline for a trace: on each GPU host's compute track,
// every op as a slice named by its label, and every idle stretch of its
// bubble account (a wait for inputs before an op, the idle after its last op)
// as a slice named "bubble" in category "bubble".
#pragma once

#include "timeline/trace_tracks.h"
#include "trace/time_ordered_batch.h"
#include "workload/compute/compute_engine.h"

namespace safs::timeline {

// `step`: the inference decode step the engine ran (added to each op's
// args), or -1. An op still running at `run_end_ps` ends there.
void trace_compute_ops(const ComputeEngine& engine, long step, TimePs run_end_ps,
                       TraceTracks& tracks, trace::TimeOrderedBatch& batch);

}  // namespace safs::timeline
