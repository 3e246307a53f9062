#include "experiment/workload_kind.h"

#include "workload/compute/compute_graph.h"
#include "workload/compute/compute_workload.h"

namespace safs {

const std::vector<WorkloadKind>& workload_kinds() {
  // Listed flows first: they take ids 0..n-1. Generated traffic that the
  // pipeline and inference kinds add follows the file's own chains and
  // generators.
  static const std::vector<WorkloadKind> kinds = {flows_kind(),     bulk_kind(),
                                                  poisson_kind(),   pipeline_kind(),
                                                  inference_kind(), connection_matrix_kind(),
                                                  chakra_kind(),    graph_kind()};
  return kinds;
}

void check_host(const SectionReader& section, std::string_view key, int host, int hosts) {
  if (host >= hosts) {
    section.fail(key, "host " + std::to_string(host) + " is out of range (the topology has " +
                          std::to_string(hosts) + " hosts, 0.." + std::to_string(hosts - 1) + ")");
  }
}

void add_compute_job(const SectionReader& section, ComputeGraph graph, ExperimentConfig& config) {
  const std::vector<const ComputeGraph*> earlier = config.workloads.all<ComputeGraph>();
  for (std::size_t g = 0; g < graph.gpu_order.size(); ++g) {
    if (graph.gpu_order[g].empty()) continue;
    for (const ComputeGraph* other : earlier) {
      if (g < other->gpu_order.size() && !other->gpu_order[g].empty()) {
        section.fail("", "runs on host " + std::to_string(g) +
                             ", which already runs an earlier job (the one whose outputs are " +
                             job_output_name("ops", other->job, ".csv") +
                             "); each GPU host runs one job");
      }
    }
  }
  graph.job = static_cast<int>(earlier.size());
  config.workloads.add(std::move(graph));
}

void check_flow_ends(const SectionReader& section, int src, int dst, int hosts) {
  check_host(section, "src", src, hosts);
  check_host(section, "dst", dst, hosts);
  if (src == dst) section.fail("dst", "a flow cannot go to its own host");
}

std::vector<std::pair<std::string, FlowClass>> flow_class_names() {
  return {{"urgent", FlowClass::kUrgent}, {"background", FlowClass::kBackground}};
}

}  // namespace safs
