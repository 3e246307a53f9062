// [connection_matrix]: an htsim connection matrix file (.cm) as a workload,
// so htsim users can bring their workloads (see workload/htsim/).
#include "experiment/workload_kind.h"
#include "workload/htsim/connection_matrix_workload.h"

namespace safs {

namespace {

struct ConnectionMatrixOptions {
  std::string file;
  FlowClass flow_class = FlowClass::kBackground;
  bool measured = true;
};

KnobTable<ConnectionMatrixOptions> connection_matrix_knobs() {
  KnobTable<ConnectionMatrixOptions> t;
  t.text("file", SAFS_FIELD(file),
         "htsim connection matrix (.cm: Nodes, Connections, Triggers, SRC->DST lines with start "
         "in us, size, trigger, send_done_trigger, recv_done_trigger; trigger lines oneshot, "
         "multishot or barrier); host i of the file is host i here. A relative path is looked "
         "up next to the scenario file, then in the working directory.")
      .required();
  t.choice("class", SAFS_FIELD(flow_class), flow_class_names(), "Class of every flow of the file.");
  t.flag("measured", SAFS_FIELD(measured),
         "true: the run waits for every flow of the file (a flow whose trigger never fires keeps "
         "it to simulation.stop_ms); false: background that ends with the run.");
  return t;
}

void read_connection_matrix(const SectionReader& section, const FileResolver& resolve,
                            ExperimentConfig& config) {
  const ConnectionMatrixOptions o = connection_matrix_knobs().read(section);
  ConnectionMatrixSpec spec;
  spec.path = resolve(o.file);
  spec.flow_class = o.flow_class;
  spec.measured = o.measured;
  try {
    spec.file = load_connection_matrix(spec.path);
  } catch (const std::invalid_argument& e) {
    section.fail("file", e.what());
  }
  if (spec.file.nodes > config.topology.num_hosts()) {
    section.fail("file", spec.path + ": Nodes " + std::to_string(spec.file.nodes) +
                             " is more than the topology's " +
                             std::to_string(config.topology.num_hosts()) + " hosts");
  }
  config.workloads.add(std::move(spec));
}

}  // namespace

WorkloadKind connection_matrix_kind() {
  return {"connection_matrix", SectionForm::kTable, connection_matrix_knobs().describe(""),
          read_connection_matrix};
}

}  // namespace safs
