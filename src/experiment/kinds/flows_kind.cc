// [[flows]] (listed flows, each measured) and [[bulk]] (chains of flows,
// back to back or one per period, that never keep a run alive).
#include "experiment/workload_kind.h"
#include "workload/bulk_chain.h"
#include "workload/flow_schedule.h"

namespace safs {

namespace {

KnobTable<FlowSpec> flow_knobs() {
  KnobTable<FlowSpec> t;
  t.integer("src", "host index", SAFS_FIELD(src), 0, 65535, "Sending host.").required();
  t.integer("dst", "host index", SAFS_FIELD(dst), 0, 65535, "Receiving host (not src).").required();
  t.integer("size_bytes", "bytes", SAFS_FIELD(size_bytes), 1, 1e15, "Application bytes to move.")
      .required();
  t.time("start_us", "us", kPsPerUs, SAFS_FIELD(start_ps), 0, 1e12,
         "When the sender starts the flow.");
  t.time("deadline_us", "us", kPsPerUs, SAFS_FIELD(deadline_ps), 0, 1e12,
         "Absolute time by which the last byte should arrive (after start_us). None by default.");
  t.choice("class", SAFS_FIELD(flow_class), flow_class_names(),
           "urgent flows feed computation that waits for them; background flows do not.");
  t.integer("dependency", "", SAFS_FIELD(dependency), 0, 9.2e18,
            "The consumer op the flow feeds; flows with the same value form a group whose last "
            "arrival is what counts. 0 = none.");
  t.integer("criticality", "", SAFS_FIELD(criticality), 0, 4294967295.0,
            "Higher outranks an earlier deadline when not every deadline can be met.");
  return t;
}

KnobTable<BulkSpec> bulk_knobs() {
  KnobTable<BulkSpec> t;
  t.integer("src", "host index", SAFS_FIELD(src), 0, 65535, "Sending host.").required();
  t.integer("dst", "host index", SAFS_FIELD(dst), 0, 65535, "Receiving host (not src).").required();
  t.integer("size_bytes", "bytes", SAFS_FIELD(size_bytes), 1, 1e15,
            "Size of each flow of the chain.")
      .required();
  t.time("start_us", "us", kPsPerUs, SAFS_FIELD(start_ps), 0, 1e12,
         "When the first flow of the chain starts.");
  t.integer("count", "flows", SAFS_FIELD(count), 0, 4294967295.0,
            "Flows in the chain; 0 = until the run ends. A run ends when every [[flows]] entry "
            "has completed (or at simulation.stop_ms if there are none): chains never keep it "
            "alive.");
  t.choice("class", SAFS_FIELD(flow_class), flow_class_names(), "Class of the chain's flows.");
  t.time("period_us", "us", kPsPerUs, SAFS_FIELD(period_ps), 0, 1e12,
         "0: a closed loop, the next flow starts when one completes. Otherwise an open loop: "
         "flow k starts at start_us + k x period_us, whether or not the ones before have "
         "completed (recurring bursts, such as a data-parallel job's gradient reduce-scatter).");
  return t;
}

}  // namespace

WorkloadKind flows_kind() {
  return {"flows", SectionForm::kArray, flow_knobs().describe(""),
          [](const SectionReader& section, const FileResolver&, ExperimentConfig& config) {
            FlowSpec flow = flow_knobs().read(section);
            std::vector<FlowSpec>& listed = config.workloads.find_or_add<ListedFlows>().flows;
            flow.id = static_cast<std::uint32_t>(listed.size());
            check_flow_ends(section, flow.src, flow.dst, config.topology.num_hosts());
            if (flow.has_deadline() && flow.deadline_ps <= flow.start_ps) {
              section.fail("deadline_us", "must be later than start_us");
            }
            listed.push_back(flow);
          }};
}

WorkloadKind bulk_kind() {
  return {"bulk", SectionForm::kArray, bulk_knobs().describe(""),
          [](const SectionReader& section, const FileResolver&, ExperimentConfig& config) {
            const BulkSpec chain = bulk_knobs().read(section);
            check_flow_ends(section, chain.src, chain.dst, config.topology.num_hosts());
            config.workloads.find_or_add<BulkTraffic>().chains.push_back(chain);
          }};
}

}  // namespace safs
