// [pipeline]: pipeline-parallel training on GPU hosts, plus optional bulk
// traffic into every stage host. [[pipeline]], one entry per job, runs
// several training jobs side by side on hosts of their own.
#include <cstdio>
#include <string>

#include "experiment/workload_kind.h"
#include "workload/bulk_chain.h"
#include "workload/compute/compute_workload.h"
#include "workload/pipeline/pipeline_workload.h"

namespace safs {

namespace {

// The section's defaults: a ZB-H1 schedule with 6 ms ops.
struct PipelineOptions {
  PipelineWorkload workload{.pipeline = {.t_f = 6 * kPsPerMs,
                                         .t_b = 6 * kPsPerMs,
                                         .t_w = 6 * kPsPerMs,
                                         .schedule = pipeline::Schedule::kZbH1}};
};

KnobTable<PipelineOptions> pipeline_knobs() {
  using pipeline::Schedule;
  KnobTable<PipelineOptions> t;
  t.choice("schedule", SAFS_FIELD(workload.pipeline.schedule),
           std::vector<std::pair<std::string, Schedule>>{{"gpipe", Schedule::kGPipe},
                                                         {"1f1b", Schedule::k1F1B},
                                                         {"zb-h1", Schedule::kZbH1},
                                                         {"zb-h2", Schedule::kZbH2}},
           "Pipeline schedule; the section's presence adds the training workload. GPipe and 1F1B "
           "run B and W fused; ZB-H1/H2 split them (ZeroBubble, arXiv 2401.10241).");
  t.integer("stages", "stages", SAFS_FIELD(workload.pipeline.stages), 2, 1024,
            "Pipeline stages, one GPU host each.");
  t.integer("microbatches", "microbatches", SAFS_FIELD(workload.pipeline.microbatches), 1, 100000,
            "Microbatches per iteration.");
  t.time("forward_ms", "ms", kPsPerMs, SAFS_FIELD(workload.pipeline.t_f), 0, 1e6,
         "T_F, one forward op.");
  t.time("backward_ms", "ms", kPsPerMs, SAFS_FIELD(workload.pipeline.t_b), 0, 1e6,
         "T_B, one input-gradient op.");
  t.time("weight_ms", "ms", kPsPerMs, SAFS_FIELD(workload.pipeline.t_w), 0, 1e6,
         "T_W, one weight-gradient op.");
  t.integer("hidden", "", SAFS_FIELD(workload.hidden), 1, 1e9, "Hidden size.");
  t.integer("sequence", "tokens", SAFS_FIELD(workload.sequence), 1, 1e9, "Sequence length.");
  t.integer("microbatch_size", "sequences", SAFS_FIELD(workload.microbatch_size), 1, 1e9,
            "Microbatch size.");
  t.integer("bytes_per_element", "bytes", SAFS_FIELD(workload.bytes_per_element), 1, 16,
            "Activation element size (2: bf16). Transfer = microbatch x sequence x hidden x this "
            "(64 MiB with the defaults).");
  t.hosts("stage_hosts", SAFS_FIELD(workload.stage_hosts),
          "Host of each stage; empty = hosts 0..stages-1.");
  t.integer("background_flows_per_stage", "flows", SAFS_FIELD(workload.background_flows_per_stage),
            0, 1000,
            "k long-lived bulk flows into every stage host, each from its own host (the hosts "
            "after the stage hosts, stage by stage).");
  t.integer("background_flow_bytes", "bytes", SAFS_FIELD(workload.background_flow_bytes), 1, 1e15,
            "Size of each background flow; each is renewed back to back until the run ends.");
  return t;
}

void read_pipeline(const SectionReader& section, const FileResolver&, ExperimentConfig& config) {
  const PipelineWorkload w = pipeline_knobs().read(section).workload;
  if (!w.stage_hosts.empty() && static_cast<int>(w.stage_hosts.size()) != w.pipeline.stages) {
    section.fail("stage_hosts", "needs one host per stage");
  }
  for (std::size_t i = 0; i < w.stage_hosts.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (w.stage_hosts[i] == w.stage_hosts[j]) {
        section.fail("stage_hosts", "host " + std::to_string(w.stage_hosts[i]) +
                                        " is given to stages " + std::to_string(j) + " and " +
                                        std::to_string(i) + "; each stage needs a host of its own");
      }
    }
  }
  if (w.pipeline.microbatches < w.pipeline.stages) {
    section.fail("microbatches", "must be at least the number of stages");
  }
  // Each factor is in range, their product need not be (it wrapped past
  // 2^64): held to the bound of every flow size.
  const double transfer_bytes = static_cast<double>(w.microbatch_size) *
                                static_cast<double>(w.sequence) * static_cast<double>(w.hidden) *
                                static_cast<double>(w.bytes_per_element);
  if (transfer_bytes > 1e15) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3g", transfer_bytes);
    section.fail("hidden", std::string("microbatch_size x sequence x hidden x bytes_per_element "
                                       "is ") +
                               text + " bytes per transfer; expected at most 1e15");
  }
  if (w.hosts_needed() > config.topology.num_hosts()) {
    section.fail("", "needs " + std::to_string(w.hosts_needed()) +
                         " hosts (stages and background senders); the topology has " +
                         std::to_string(config.topology.num_hosts()));
  }
  // The background joins the file's [[bulk]] chains: one workload, one start event.
  std::vector<BulkSpec> background = pipeline_background(w);
  if (!background.empty()) {
    std::vector<BulkSpec>& chains = config.workloads.find_or_add<BulkTraffic>().chains;
    chains.insert(chains.end(), background.begin(), background.end());
  }
  add_compute_job(section, build_pipeline_graph(w), config);
}

}  // namespace

WorkloadKind pipeline_kind() {
  return {"pipeline", SectionForm::kTableOrArray, pipeline_knobs().describe(""), read_pipeline};
}

}  // namespace safs
