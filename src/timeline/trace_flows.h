// Flows on their receivers' tracks: each flow a slice from start to finish
// (args: size, class, deadline), and its no-bubble timestamp an instant
// marker at the deadline on the same lane. Flows that overlap in time go on
// separate lanes (viewers need slices on one row to nest), the earliest freed
// lane first.
#pragma once

#include <vector>

#include "metrics/flow_recorder.h"
#include "timeline/trace_tracks.h"
#include "trace/time_ordered_batch.h"

namespace safs::timeline {

// A flow not finished at `run_end_ps` ends there (args: "finished": false).
void trace_receiver_flows(const std::vector<FlowRecord>& records, TimePs run_end_ps,
                          TraceTracks& tracks, trace::TimeOrderedBatch& batch);

}  // namespace safs::timeline
