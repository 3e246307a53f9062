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

}  // namespace safs::example
