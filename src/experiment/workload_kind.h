// The workload kinds a scenario may contain, one per section. Each kind owns
// its section's keys (a knob table over its spec) and reads one table of it,
// through a SectionReader (no file format), into the run's configuration,
// checking it against what is there already (the topology's hosts, another
// workload placed on the same GPUs). The scenario parser loops over this list;
// adding a kind is one entry here.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "experiment/experiment.h"
#include "options/knob.h"
#include "workload/compute/compute_graph.h"

namespace safs {

// Turns a file name given in a section into the path to open (a relative
// name is looked up next to the scenario file).
using FileResolver = std::function<std::string(const std::string&)>;

// How a kind's section is written.
enum class SectionForm {
  kTable,         // [inference]: one table
  kArray,         // [[flows]]: every entry is one table
  kTableOrArray,  // [pipeline] for one, [[pipeline]] for several (one job each)
};

struct WorkloadKind {
  std::string_view section;  // "flows", "pipeline"
  SectionForm form;
  std::vector<KeySpec> keys;  // paths relative to the section
  std::function<void(const SectionReader&, const FileResolver&, ExperimentConfig&)> read;
};

// In the order their sections are read (later kinds see earlier ones).
const std::vector<WorkloadKind>& workload_kinds();

WorkloadKind flows_kind();
WorkloadKind bulk_kind();
WorkloadKind poisson_kind();
WorkloadKind pipeline_kind();
WorkloadKind inference_kind();
WorkloadKind connection_matrix_kind();
WorkloadKind chakra_kind();
WorkloadKind graph_kind();

// Adds `graph` as the run's next computation (a job): numbers it (its
// outputs are ops.csv and summary.json's "compute" for the first job,
// ops_2.csv and "compute_2" for the second, ...) after checking that none of
// its GPUs already runs an earlier section's computation (a GPU runs one job).
void add_compute_job(const SectionReader& section, ComputeGraph graph, ExperimentConfig& config);
// The host at `key` exists (host indices are validated >= 0 already).
void check_host(const SectionReader& section, std::string_view key, int host, int hosts);
// Both ends of a flow (keys src and dst) exist and differ.
void check_flow_ends(const SectionReader& section, int src, int dst, int hosts);
// The choices of a `class` key.
std::vector<std::pair<std::string, FlowClass>> flow_class_names();

}  // namespace safs
