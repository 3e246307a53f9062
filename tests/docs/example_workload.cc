#include "docs/example_workload.h"

#include <algorithm>
#include <string>

#include "workload/compute/compute_workload.h"

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

std::unique_ptr<Workload> make_workload(const RingAllReduce& spec, WorkloadHost& host) {
  return std::make_unique<ComputeWorkload>(host, build_ring_allreduce_graph(spec));
}

std::string describe_workload(const RingAllReduce& spec) {
  return "a ring all-reduce over " + std::to_string(spec.gpus.size()) + " GPUs";
}

// [snippet:checkpoint]
std::unique_ptr<Workload> make_workload(const Checkpoints& spec, WorkloadHost& host) {
  return std::make_unique<CheckpointWriter>(host, spec);
}

std::string describe_workload(const Checkpoints& spec) {
  return std::to_string(spec.count) + " checkpoint writes";
}

void CheckpointWriter::arm() {
  if (spec_.count > 0) host_.sim().schedule_at(spec_.period_ps, this);
}

void CheckpointWriter::handle_event(EventId /*id*/) {
  FlowSpec write;
  write.src = spec_.src;
  write.dst = spec_.dst;
  write.size_bytes = spec_.size_bytes;
  write.start_ps = host_.sim().now();
  flow_ids_.push_back(host_.launch(write, {.measured = true}));
  if (flow_ids_.size() < spec_.count) host_.sim().schedule_in(spec_.period_ps, this);
}

void CheckpointWriter::on_flow_complete(const FlowSpec& flow, TimePs at_ps) {
  if (std::find(flow_ids_.begin(), flow_ids_.end(), flow.id) == flow_ids_.end()) return;
  ++landed_;
  slowest_ps_ = std::max(slowest_ps_, at_ps - flow.start_ps);
  if (finished()) host_.workload_finished();
}

void CheckpointWriter::report(RunReport& report) const {
  report.summary_sections["checkpoints"] = {{"landed", landed_},
                                            {"slowest_write_s", ps_to_sec(slowest_ps_)}};
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
  return {"allreduce", SectionForm::kTable, ring_allreduce_knobs().describe(""),
          [](const SectionReader& section, const FileResolver&, ExperimentConfig& config) {
            const RingAllReduce spec = ring_allreduce_knobs().read(section);
            if (spec.gpus.size() < 2) section.fail("gpus", "needs at least two GPUs");
            for (const int gpu : spec.gpus) {
              if (gpu >= config.topology.num_hosts()) section.fail("gpus", "host out of range");
            }
            config.workloads.add(spec);
          }};
}
// [end-snippet]

}  // namespace safs::example
