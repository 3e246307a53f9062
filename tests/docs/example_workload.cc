#include "docs/example_workload.h"

#include <string>

namespace safs::example {

// [snippet:graph]
ComputeGraph build_ring_allreduce_graph(const RingAllReduce& spec) {
  const int n = static_cast<int>(spec.gpus.size());
  ComputeGraph graph;
  // last[i]: GPU i's latest op; its end sends the next chunk to GPU i + 1.
  std::vector<int> last(n);
  for (int i = 0; i < n; ++i) {
    last[i] = graph.add_op(spec.gpus[i], spec.backward_ps, "backward g" + std::to_string(i));
  }
  for (int step = 0; step < spec.steps(); ++step) {
    std::vector<int> next(n);
    for (int i = 0; i < n; ++i) {  // add_op appends to the GPU's order
      next[i] = graph.add_op(spec.gpus[i], spec.step_ps,
                             "step " + std::to_string(step) + " g" + std::to_string(i));
    }
    for (int i = 0; i < n; ++i) {  // from the ring predecessor's previous op
      graph.add_transfer(last[(i + n - 1) % n], next[i], spec.chunk_bytes());
    }
    last = next;
  }
  return graph;
}
// [end-snippet]

// [snippet:kind]
KnobTable<RingAllReduce> ring_allreduce_knobs() {
  KnobTable<RingAllReduce> t;
  t.hosts("gpus", SAFS_FIELD(gpus), "GPU hosts in ring order (at least two).");
  t.time("backward_ms", "ms", kPsPerMs, SAFS_FIELD(backward_ps), 0, 1e6,
         "Backward pass before the exchange.");
  t.time("step_us", "us", kPsPerUs, SAFS_FIELD(step_ps), 0, 1e9,
         "Reduce or copy one received chunk.");
  t.integer("gradient_bytes", "bytes", SAFS_FIELD(gradient_bytes), 1, 1e15,
            "Gradient size; each step moves gradient / GPUs.");
  return t;
}

WorkloadKind ring_allreduce_kind() {
  return {"allreduce", false, ring_allreduce_knobs().describe(""),
          [](const SectionReader& section, const FileResolver&, ExperimentConfig& config) {
            const RingAllReduce spec = ring_allreduce_knobs().read(section);
            if (spec.gpus.size() < 2) section.fail("gpus", "needs at least two GPUs");
            for (const int gpu : spec.gpus) {
              if (gpu >= config.topology.num_hosts()) section.fail("gpus", "host out of range");
            }
            if (config.compute) section.fail("", "cannot share a run with another computation");
            config.compute = build_ring_allreduce_graph(spec);
          }};
}
// [end-snippet]

}  // namespace safs::example
