// [inference]: attention-FFN disaggregated decode serving, with KV-cache and
// background traffic into its hosts.
#include <cstdio>
#include <tuple>

#include "experiment/workload_kind.h"
#include "workload/compute/compute_workload.h"
#include "workload/flow_size_cdf.h"
#include "workload/inference/inference_driver.h"
#include "workload/poisson_flows.h"

namespace safs {

namespace {

// The section: the workload plus how many hosts each role takes (placed in
// this order from host 0, or on the listed hosts). Defaults: a Step-3-like
// 16A2F deployment.
struct InferenceOptions {
  InferenceWorkload workload{.requests = {.arrivals_per_s = 0},
                             .kv_cdf_path = "data/cdf/kv-cache.csv",
                             .bulk_cdf_path = "data/cdf/websearch.csv"};
  int attention_instances = 16;
  int ffn_instances = 2;
  int prefill_hosts = 8;
  int bulk_hosts = 2;
  std::vector<int> hosts;  // in role order; empty: 0, 1, 2, ...
};

KnobTable<InferenceOptions> inference_knobs() {
  KnobTable<InferenceOptions> t;
  t.integer("attention_instances", "instances", SAFS_FIELD(attention_instances), 1, 4096,
            "Attention instances, hosts 0..A-1 (or the first of `hosts`); the section's presence "
            "adds AFD decode serving "
            "(MegaScale-Infer / Step-3 attention-FFN disaggregation).");
  t.integer("ffn_instances", "instances", SAFS_FIELD(ffn_instances), 1, 4096,
            "FFN instances, the hosts after the attention hosts.");
  t.integer("layers", "layers", SAFS_FIELD(workload.afd.layers), 1, 10000,
            "Layers per decode step (61: DeepSeek-V3, Step-3).");
  t.integer("microbatches", "microbatches", SAFS_FIELD(workload.afd.microbatches), 1, 64,
            "Micro-batches ping-ponging A -> F -> A per layer (Step-3: 3).");
  t.integer("hidden", "", SAFS_FIELD(workload.afd.hidden), 1, 1e9, "Hidden size.");
  t.integer("dispatch_bytes_per_element", "bytes",
            SAFS_FIELD(workload.afd.dispatch_bytes_per_element), 1, 16,
            "Dispatch A -> F element size (1: FP8). Dispatch = routed tokens x hidden x this.");
  t.integer("combine_bytes_per_element", "bytes",
            SAFS_FIELD(workload.afd.combine_bytes_per_element), 1, 16,
            "Combine F -> A element size (2: BF16).");
  t.number("routing_fraction", "fraction", SAFS_FIELD(workload.afd.routing_fraction), 0, 1,
           "Share of a micro-batch's tokens routed to each FFN instance, rounded up (1: every "
           "token reaches every FFN instance, the worst case; 0.5: one of two).");
  t.integer("tokens_per_microbatch", "requests", SAFS_FIELD(workload.afd.max_tokens_per_microbatch),
            1, 100000,
            "Request slots per micro-batch of an attention instance; the batch per instance is "
            "this x microbatches.");
  t.time("attention_fixed_us", "us", kPsPerUs, SAFS_FIELD(workload.afd.compute.attention_fixed_ps),
         0, 1e9,
         "Attention op time: this + per_token x tokens + per_context_token x context tokens.");
  t.time("attention_per_token_us", "us", kPsPerUs,
         SAFS_FIELD(workload.afd.compute.attention_per_token_ps), 0, 1e9,
         "See attention_fixed_us.");
  t.time("attention_per_context_token_ns", "ns", kPsPerNs,
         SAFS_FIELD(workload.afd.compute.attention_per_context_token_ps), 0, 1e9,
         "KV-cache read per context token; see attention_fixed_us.");
  t.time("ffn_fixed_us", "us", kPsPerUs, SAFS_FIELD(workload.afd.compute.ffn_fixed_ps), 0, 1e9,
         "FFN op time: this + per_token x tokens received from all attention instances.");
  t.time("ffn_per_token_us", "us", kPsPerUs, SAFS_FIELD(workload.afd.compute.ffn_per_token_ps), 0,
         1e9, "See ffn_fixed_us.");
  t.time("sample_us", "us", kPsPerUs, SAFS_FIELD(workload.afd.compute.sample_ps), 0, 1e9,
         "LM head and sampling of a micro-batch after the last layer.");
  t.integer("output_tokens_min", "tokens", SAFS_FIELD(workload.requests.output_tokens_min), 2, 1e9,
            "Output length of a request, uniform in [min, max].");
  t.integer("output_tokens_max", "tokens", SAFS_FIELD(workload.requests.output_tokens_max), 2, 1e9,
            "See output_tokens_min.");
  t.integer("context_tokens_min", "tokens", SAFS_FIELD(workload.requests.context_tokens_min), 0,
            1e9,
            "Prompt (KV-cache) length of a request, uniform in [min, max]; grows by one per "
            "step.");
  t.integer("context_tokens_max", "tokens", SAFS_FIELD(workload.requests.context_tokens_max), 0,
            1e9, "See context_tokens_min.");
  t.number("batch_load", "fraction", SAFS_FIELD(workload.batch_load), 0, 100,
           "Poisson arrival rate as a share of what a full batch serves at its compute-only step "
           "time: slots / ((mean output tokens - 1) x full-batch step) x this. Steps at partial "
           "batch are shorter, so the batch settles below this share.");
  t.number("arrivals_per_s", "requests/s", SAFS_FIELD(workload.requests.arrivals_per_s), 0, 1e12,
           "Request arrival rate; used instead of batch_load when batch_load = 0.");
  t.integer("warmup_requests", "requests", SAFS_FIELD(workload.warmup_requests), 0, 1e9,
            "The first arrivals, served but not measured.");
  t.integer("measured_requests", "requests", SAFS_FIELD(workload.measured_requests), 1, 1e9,
            "Requests whose TPOT is reported; the run lasts until they finish.");
  t.flag("free_communication", SAFS_FIELD(workload.free_communication),
         "Transfers arrive as they leave (an infinitely fast network): the compute-only bound.");
  t.integer("prefill_hosts", "hosts", SAFS_FIELD(prefill_hosts), 0, 4096,
            "Prefill hosts (after the FFN hosts) sending KV caches into the attention hosts; "
            "kv_load x attention hosts / this must be at most 1 (each sender's share).");
  t.number("kv_load", "fraction", SAFS_FIELD(workload.kv_load), 0, 1,
           "KV-cache load on each attention host's downlink (Poisson, wire overhead included).");
  t.text("kv_cdf", SAFS_FIELD(workload.kv_cdf_path),
         "KV-cache transfer sizes (a flow-size CDF file, see poisson[].cdf).");
  t.integer("bulk_hosts", "hosts", SAFS_FIELD(bulk_hosts), 0, 4096,
            "Hosts (after the prefill hosts) sending background traffic into the FFN hosts.");
  t.number("bulk_load", "fraction", SAFS_FIELD(workload.bulk_load), 0, 1,
           "Background load on each FFN host's downlink.");
  t.text("bulk_cdf", SAFS_FIELD(workload.bulk_cdf_path),
         "Background flow sizes into the FFN hosts.");
  t.hosts("hosts", SAFS_FIELD(hosts),
          "The job's hosts in role order: attention, FFN, prefill, then bulk hosts (one each); "
          "empty = hosts 0, 1, 2, ... Places the job across a fabric's leaves or pods.");
  return t;
}

// The job's hosts in role order: `hosts` as given, or 0..needed-1.
std::vector<int> job_hosts(const SectionReader& section, const InferenceOptions& o, int needed,
                           int topology_hosts) {
  if (o.hosts.empty()) {
    if (needed > topology_hosts) {
      section.fail("", "needs " + std::to_string(needed) +
                           " hosts (attention, FFN, prefill and bulk hosts); the topology has " +
                           std::to_string(topology_hosts));
    }
    std::vector<int> hosts(static_cast<std::size_t>(needed));
    for (int i = 0; i < needed; ++i) hosts[i] = i;
    return hosts;
  }
  if (static_cast<int>(o.hosts.size()) != needed) {
    section.fail("hosts", "lists " + std::to_string(o.hosts.size()) + " hosts; the job has " +
                              std::to_string(needed) +
                              " (attention, FFN, prefill and bulk hosts, in that order)");
  }
  std::vector<bool> seen(static_cast<std::size_t>(topology_hosts), false);
  for (const int h : o.hosts) {
    check_host(section, "hosts", h, topology_hosts);
    if (seen[h]) section.fail("hosts", "lists host " + std::to_string(h) + " twice");
    seen[h] = true;
  }
  return o.hosts;
}

// Each background generator's load on every receiver link must fit in its
// senders' links, or the backlog would grow for the whole run.
void check_background(const SectionReader& section, const FileResolver& resolve,
                      InferenceWorkload& w) {
  struct Background {
    const char* load_key;
    const char* hosts_key;
    const char* cdf_key;
    double load;
    std::size_t senders, receivers;
    std::string* cdf_path;
  };
  for (const Background& b :
       {Background{"kv_load", "prefill_hosts", "kv_cdf", w.kv_load, w.prefill_hosts.size(),
                   w.afd.attention_hosts.size(), &w.kv_cdf_path},
        Background{"bulk_load", "bulk_hosts", "bulk_cdf", w.bulk_load, w.bulk_hosts.size(),
                   w.afd.ffn_hosts.size(), &w.bulk_cdf_path}}) {
    if (b.load <= 0 || b.senders == 0 || w.free_communication) continue;  // no generator
    const double per_sender =
        b.load * static_cast<double>(b.receivers) / static_cast<double>(b.senders);
    if (per_sender > 1.0) {
      char share[32];
      std::snprintf(share, sizeof share, "%.2f", per_sender);
      section.fail_near(b.load_key, b.hosts_key,
                        "asks each of the " + std::to_string(b.senders) + " " + b.hosts_key +
                            " for " + share + " of its link; add hosts or lower the load");
    }
    *b.cdf_path = resolve(*b.cdf_path);
    try {
      FlowSizeCdf::load(*b.cdf_path);
    } catch (const std::exception& e) {
      section.fail(b.cdf_key, e.what());
    }
  }
}

void read_inference(const SectionReader& section, const FileResolver& resolve,
                    ExperimentConfig& config) {
  const InferenceOptions o = inference_knobs().read(section);
  InferenceWorkload w = o.workload;
  const int needed = o.attention_instances + o.ffn_instances + o.prefill_hosts + o.bulk_hosts;
  const std::vector<int> hosts = job_hosts(section, o, needed, config.topology.num_hosts());
  auto next = hosts.begin();
  for (int i = 0; i < o.attention_instances; ++i) w.afd.attention_hosts.push_back(*next++);
  for (int i = 0; i < o.ffn_instances; ++i) w.afd.ffn_hosts.push_back(*next++);
  for (int i = 0; i < o.prefill_hosts; ++i) w.prefill_hosts.push_back(*next++);
  for (int i = 0; i < o.bulk_hosts; ++i) w.bulk_hosts.push_back(*next++);
  // Training jobs may share the run on other hosts (their stage_hosts).
  std::vector<bool> ours(static_cast<std::size_t>(config.topology.num_hosts()), false);
  for (const int h : hosts) ours[h] = true;
  for (const ComputeGraph* graph : config.workloads.all<ComputeGraph>()) {
    for (const ComputeOp& op : graph->ops) {
      if (ours[op.gpu]) {
        section.fail(o.hosts.empty() ? "" : "hosts",
                     "uses host " + std::to_string(op.gpu) +
                         ", where a training job ([pipeline], " + "outputs " +
                         job_output_name("ops", graph->job, ".csv") +
                         ") runs; give each job hosts of its own (inference.hosts, "
                         "pipeline.stage_hosts)");
      }
    }
  }
  const RequestMix& mix = w.requests;
  for (const auto& [low_key, low, high_key, high] :
       {std::tuple{"output_tokens_min", mix.output_tokens_min, "output_tokens_max",
                   mix.output_tokens_max},
        std::tuple{"context_tokens_min", mix.context_tokens_min, "context_tokens_max",
                   mix.context_tokens_max}}) {
    if (high < low) {  // point at whichever of the pair the file sets
      section.fail_near(
          high_key, low_key,
          "must be at least " + std::string(low_key) + " (" + std::to_string(low) + ")");
    }
  }
  if (w.batch_load <= 0 && mix.arrivals_per_s <= 0) {
    section.fail("", "needs batch_load > 0 or arrivals_per_s > 0");
  }
  if (w.batch_load > 0 && full_batch_step_ps(w) <= 0) {
    section.fail("",
                 "batch_load needs a compute time above zero (every *_us and *_ns cost is 0); "
                 "set arrivals_per_s instead");
  }
  check_background(section, resolve, w);
  if (!w.free_communication) {  // an infinitely fast network has no contention to model
    // Generators of their own, armed before the first step as any [[poisson]].
    for (PoissonSpec& generator : inference_background(w))
      config.workloads.add(std::move(generator));
  }
  config.workloads.add(std::move(w));
}

}  // namespace

WorkloadKind inference_kind() {
  return {"inference", SectionForm::kTable, inference_knobs().describe(""), read_inference};
}

}  // namespace safs
