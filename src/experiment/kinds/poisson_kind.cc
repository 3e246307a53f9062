// [[poisson]]: open-loop flows with sizes from a CDF file.
#include <algorithm>

#include "experiment/workload_kind.h"
#include "workload/flow_size_cdf.h"
#include "workload/poisson_flows.h"

namespace safs {

namespace {

KnobTable<PoissonSpec> poisson_knobs() {
  KnobTable<PoissonSpec> t;
  t.text("cdf", SAFS_FIELD(cdf_path),
         "Flow-size CDF file (data/cdf/ has web search, data mining and Homa W1-W5). A relative "
         "path is looked up next to the scenario file, then in the working directory. Header "
         "'packets,cdf' (1460-byte packets, interpolated as ns-2 does) or 'bytes,cdf' "
         "(discrete).")
      .required();
  t.number("load", "fraction", SAFS_FIELD(load), 1e-6, 10,
           "Offered load on each sender's link (or each receiver's, see load_link), wire "
           "overhead included: arrivals = load x link rate x links / (8 x mean wire bytes) per "
           "second.")
      .required();
  t.choice("load_link", SAFS_FIELD(per_receiver),
           std::vector<std::pair<std::string, bool>>{{"sender", false}, {"receiver", true}},
           "Whose links the load refers to.");
  t.hosts("senders", SAFS_FIELD(senders),
          "Hosts that send; empty = every host. Each flow picks a sender and a different "
          "receiver uniformly.");
  t.hosts("receivers", SAFS_FIELD(receivers), "Hosts that receive; empty = every host.");
  t.time("start_us", "us", kPsPerUs, SAFS_FIELD(start_ps), 0, 1e12, "No arrivals before this.");
  t.time("stop_us", "us", kPsPerUs, SAFS_FIELD(stop_ps), 0, 1e12,
         "No arrivals after this. A measured generator needs stop_us or max_flows.");
  t.integer("max_flows", "flows", SAFS_FIELD(max_flows), 0, 1e12,
            "Stop after this many flows; 0 = no limit.");
  t.choice("class", SAFS_FIELD(flow_class), flow_class_names(), "Class of the flows.");
  t.number("deadline_factor", "", SAFS_FIELD(deadline_factor), 0, 1e6,
           "If > 0, each flow's deadline is start + factor x its ideal FCT (the synthetic "
           "deadlines of D2TCP evaluations; background.md §2 cites 2.0).");
  t.flag("measured", SAFS_FIELD(measured),
         "true: the run waits for these flows and they count in the results; false: background "
         "that ends with the run.");
  return t;
}

bool listed(const std::vector<int>& hosts, int h) {
  return hosts.empty() || std::find(hosts.begin(), hosts.end(), h) != hosts.end();
}

void read_poisson(const SectionReader& section, const FileResolver& resolve,
                  ExperimentConfig& config) {
  PoissonSpec spec = poisson_knobs().read(section);
  spec.cdf_path = resolve(spec.cdf_path);
  const int hosts = config.topology.num_hosts();
  for (const auto& [key, list] :
       {std::pair{"senders", &spec.senders}, std::pair{"receivers", &spec.receivers}}) {
    for (const int h : *list) {
      if (h >= hosts) {
        section.fail(key, "host " + std::to_string(h) + " is out of range (the topology has " +
                              std::to_string(hosts) + " hosts)");
      }
    }
  }
  if (spec.measured && spec.stop_ps == kTimeNever && spec.max_flows == 0) {
    section.fail("", "a measured generator needs stop_us or max_flows (or set measured = false)");
  }
  if (spec.stop_ps <= spec.start_ps) section.fail("stop_us", "must be later than start_us");
  bool any_pair = false;
  for (int a = 0; a < hosts && !any_pair; ++a) {
    for (int b = 0; b < hosts && listed(spec.senders, a) && !any_pair; ++b) {
      any_pair = listed(spec.receivers, b) && a != b;
    }
  }
  if (!any_pair) section.fail("", "no sender has a different host to send to");
  try {
    FlowSizeCdf::load(spec.cdf_path);
  } catch (const std::exception& e) {
    section.fail("cdf", e.what());
  }
  config.workloads.add(std::move(spec));
}

}  // namespace

WorkloadKind poisson_kind() {
  return {"poisson", SectionForm::kArray, poisson_knobs().describe(""), read_poisson};
}

}  // namespace safs
