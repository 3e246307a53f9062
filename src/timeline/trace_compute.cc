#include "timeline/trace_compute.h"

namespace safs::timeline {

void trace_compute_ops(const ComputeEngine& engine, long step, TimePs run_end_ps,
                       TraceTracks& tracks, trace::TimeOrderedBatch& batch) {
  const ComputeGraph& graph = engine.graph();
  for (std::size_t i = 0; i < engine.ops().size(); ++i) {
    const OpRecord& op = engine.ops()[i];
    if (op.start_ps < 0) continue;  // never started
    const ComputeOp& spec = graph.ops[i];
    const trace::Track track = tracks.compute(spec.gpu);
    if (op.wait_ps > 0) {
      trace::TraceArgs args;
      args.add("before", spec.label).add_fixed("wait_ms", ps_to_sec(op.wait_ps) * 1e3, 6);
      if (step >= 0) args.add("step", std::int64_t{step});
      batch.slice(track, "bubble", "bubble", op.start_ps - op.wait_ps, op.start_ps,
                  std::move(args));
    }
    trace::TraceArgs args;
    args.add("op", static_cast<std::uint64_t>(i))
        .add_fixed("planned_start_ms", ps_to_sec(op.planned_start_ps) * 1e3, 6)
        .add("finished", op.end_ps >= 0);
    if (step >= 0) args.add("step", std::int64_t{step});
    batch.slice(track, spec.label, "op", op.start_ps, op.end_ps >= 0 ? op.end_ps : run_end_ps,
                std::move(args));
  }
}

}  // namespace safs::timeline
