#include "workload/pipeline/pipeline_workload.h"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>

namespace safs {

namespace {

int first_background_host(const PipelineWorkload& w) {
  if (w.stage_hosts.empty()) return w.pipeline.stages;
  return *std::max_element(w.stage_hosts.begin(), w.stage_hosts.end()) + 1;
}

std::string label(const pipeline::Op& op) {
  const char* kind = op.kind == pipeline::OpKind::kF   ? "F"
                     : op.kind == pipeline::OpKind::kB ? "B"
                                                       : "W";
  return std::string(kind) + " s" + std::to_string(op.stage) + " mb" +
         std::to_string(op.microbatch);
}

}  // namespace

int PipelineWorkload::hosts_needed() const {
  return first_background_host(*this) + pipeline.stages * background_flows_per_stage;
}

ComputeGraph build_pipeline_graph(const PipelineWorkload& w) {
  const pipeline::PipelineSpec& p = w.pipeline;
  ComputeGraph graph;
  std::map<std::tuple<int, int, int>, int> op_index;  // (stage, microbatch, kind) -> op
  const auto orders = pipeline::stage_orders(p);
  for (int s = 0; s < p.stages; ++s) {
    for (const pipeline::Op& op : orders[static_cast<std::size_t>(s)]) {
      op_index[{s, op.microbatch, static_cast<int>(op.kind)}] =
          graph.add_op(w.stage_host(s), pipeline::op_duration(p, op.kind), label(op));
    }
  }
  const auto find = [&](int s, int mb, pipeline::OpKind kind) {
    return op_index.at({s, mb, static_cast<int>(kind)});
  };
  for (int mb = 0; mb < p.microbatches; ++mb) {
    for (int s = 0; s + 1 < p.stages; ++s) {
      graph.add_transfer(find(s, mb, pipeline::OpKind::kF), find(s + 1, mb, pipeline::OpKind::kF),
                         w.transfer_bytes());
    }
    for (int s = p.stages - 1; s > 0; --s) {
      graph.add_transfer(find(s, mb, pipeline::OpKind::kB), find(s - 1, mb, pipeline::OpKind::kB),
                         w.transfer_bytes());
    }
  }
  return graph;
}

std::vector<BulkSpec> pipeline_background(const PipelineWorkload& w) {
  std::vector<BulkSpec> chains;
  int host = first_background_host(w);
  for (int s = 0; s < w.pipeline.stages; ++s) {
    for (int j = 0; j < w.background_flows_per_stage; ++j) {
      BulkSpec chain;
      chain.src = host++;
      chain.dst = w.stage_host(s);
      chain.size_bytes = w.background_flow_bytes;
      chains.push_back(chain);
    }
  }
  return chains;
}

}  // namespace safs
