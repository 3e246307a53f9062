#include "timeline/trace_compute.h"

#include "workload/compute/bubble_account.h"

namespace safs::timeline {

namespace {

// The idle stretches of the bubble account, so that a GPU's bubble slices
// add up to its bubble_s in summary.json (in a run stopped early, that figure
// also counts the unfinished op's time, which shows as the op's own slice).
void trace_bubbles(const ComputeEngine& engine, long step, TraceTracks& tracks,
                   trace::TimeOrderedBatch& batch) {
  const BubbleAccount account(engine);
  for (std::size_t g = 0; g < account.gpus(); ++g) {
    if (engine.graph().gpu_order[g].empty()) continue;  // not a GPU of this computation
    const trace::Track track = tracks.compute(static_cast<int>(g));
    for (const IdleSlice& idle : account.gpu(static_cast<int>(g)).idle) {
      trace::TraceArgs args;
      if (idle.before_op >= 0) {
        args.add("before", engine.graph().ops[static_cast<std::size_t>(idle.before_op)].label);
      } else {
        args.add("after", "last op");
      }
      args.add_fixed("idle_ms", ps_to_sec(idle.length_ps()) * 1e3, 6);
      if (step >= 0) args.add("step", std::int64_t{step});
      batch.slice(track, "bubble", "bubble", idle.from_ps, idle.to_ps, std::move(args));
    }
  }
}

}  // namespace

void trace_compute_ops(const ComputeEngine& engine, long step, TimePs run_end_ps,
                       TraceTracks& tracks, trace::TimeOrderedBatch& batch) {
  const ComputeGraph& graph = engine.graph();
  trace_bubbles(engine, step, tracks, batch);
  for (std::size_t i = 0; i < engine.ops().size(); ++i) {
    const OpRecord& op = engine.ops()[i];
    if (op.start_ps < 0) continue;  // never started
    const ComputeOp& spec = graph.ops[i];
    trace::TraceArgs args;
    args.add("op", static_cast<std::uint64_t>(i))
        .add_fixed("planned_start_ms", ps_to_sec(op.planned_start_ps) * 1e3, 6)
        .add("finished", op.end_ps >= 0);
    if (step >= 0) args.add("step", std::int64_t{step});
    batch.slice(tracks.compute(spec.gpu), spec.label, "op", op.start_ps,
                op.end_ps >= 0 ? op.end_ps : run_end_ps, std::move(args));
  }
}

}  // namespace safs::timeline
