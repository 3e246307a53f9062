#include "scenario/schema.h"

#include <algorithm>

#include "scenario/sections.h"
#include "scenario/suggest.h"
#include "scenario/sweep_spec.h"
#include "transport/registry.h"

namespace safs {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<KeySpec> build_keys() {
  using VT = ValueType;
  std::vector<KeySpec> k;
  auto add = [&k](std::vector<KeySpec> specs) {
    for (KeySpec& spec : specs) k.push_back(std::move(spec));
  };
  add(simulation_knobs().describe("simulation."));
  add(topology_knobs().describe("topology."));
  add(network_knobs().describe("network."));
  KeySpec transport_name{"transport.name", VT::kString, "",
                         std::string(ExperimentConfig{}.transport),
                         "The transport every flow uses."};
  for (const TransportInfo& t : all_transports()) transport_name.choices.emplace_back(t.name);
  k.push_back(transport_name);
  add({
      // [[flows]]
      {"flows[].src", VT::kInteger, "host index", std::monostate{}, "Sending host.", true, 0,
       65535},
      {"flows[].dst", VT::kInteger, "host index", std::monostate{}, "Receiving host (not src).",
       true, 0, 65535},
      {"flows[].size_bytes", VT::kInteger, "bytes", std::monostate{}, "Application bytes to move.",
       true, 1, 1e15},
      {"flows[].start_us", VT::kFloat, "us", 0.0, "When the sender starts the flow.", false, 0,
       1e12},
      {"flows[].deadline_us", VT::kFloat, "us", std::monostate{},
       "Absolute time by which the last byte should arrive (after start_us). None by default.",
       false, 0, 1e12},
      {"flows[].class",
       VT::kString,
       "",
       std::string("background"),
       "urgent flows feed computation that waits for them; background flows do not.",
       false,
       -kInf,
       kInf,
       {"urgent", "background"}},
      {"flows[].dependency", VT::kInteger, "", std::int64_t{0},
       "The consumer op the flow feeds; flows with the same value form a group whose last "
       "arrival is what counts. 0 = none.",
       false, 0, 9.2e18},
      {"flows[].criticality", VT::kInteger, "", std::int64_t{0},
       "Higher outranks an earlier deadline when not every deadline can be met.", false, 0,
       4294967295.0},

      // [[bulk]]
      {"bulk[].src", VT::kInteger, "host index", std::monostate{}, "Sending host.", true, 0, 65535},
      {"bulk[].dst", VT::kInteger, "host index", std::monostate{}, "Receiving host (not src).",
       true, 0, 65535},
      {"bulk[].size_bytes", VT::kInteger, "bytes", std::monostate{},
       "Size of each flow of the chain; the next starts when one completes.", true, 1, 1e15},
      {"bulk[].start_us", VT::kFloat, "us", 0.0, "When the first flow of the chain starts.", false,
       0, 1e12},
      {"bulk[].count", VT::kInteger, "flows", std::int64_t{0},
       "Flows in the chain; 0 = until the run ends. A run ends when every [[flows]] entry has "
       "completed (or at simulation.stop_ms if there are none): chains never keep it alive.",
       false, 0, 4294967295.0},
      {"bulk[].class",
       VT::kString,
       "",
       std::string("background"),
       "Class of the chain's flows.",
       false,
       -kInf,
       kInf,
       {"urgent", "background"}},

      // [pipeline]
      {"pipeline.schedule",
       VT::kString,
       "",
       std::string("zb-h1"),
       "Pipeline schedule; the section's presence adds the training workload. GPipe and 1F1B "
       "run B and W fused; ZB-H1/H2 split them (ZeroBubble, arXiv 2401.10241).",
       false,
       -kInf,
       kInf,
       {"gpipe", "1f1b", "zb-h1", "zb-h2"}},
      {"pipeline.stages", VT::kInteger, "stages", std::int64_t{4},
       "Pipeline stages, one GPU host each.", false, 2, 1024},
      {"pipeline.microbatches", VT::kInteger, "microbatches", std::int64_t{8},
       "Microbatches per iteration.", false, 1, 100000},
      {"pipeline.forward_ms", VT::kFloat, "ms", 6.0, "T_F, one forward op.", false, 0, 1e6},
      {"pipeline.backward_ms", VT::kFloat, "ms", 6.0, "T_B, one input-gradient op.", false, 0, 1e6},
      {"pipeline.weight_ms", VT::kFloat, "ms", 6.0, "T_W, one weight-gradient op.", false, 0, 1e6},
      {"pipeline.hidden", VT::kInteger, "", std::int64_t{8192}, "Hidden size.", false, 1, 1e9},
      {"pipeline.sequence", VT::kInteger, "tokens", std::int64_t{4096}, "Sequence length.", false,
       1, 1e9},
      {"pipeline.microbatch_size", VT::kInteger, "sequences", std::int64_t{1}, "Microbatch size.",
       false, 1, 1e9},
      {"pipeline.bytes_per_element", VT::kInteger, "bytes", std::int64_t{2},
       "Activation element size (2: bf16). Transfer = microbatch x sequence x hidden x this "
       "(64 MiB with the defaults).",
       false, 1, 16},
      {"pipeline.stage_hosts", VT::kHostList, "host indices", std::vector<std::int64_t>{},
       "Host of each stage; empty = hosts 0..stages-1.", false, 0, 65535},
      {"pipeline.background_flows_per_stage", VT::kInteger, "flows", std::int64_t{0},
       "k long-lived bulk flows into every stage host, each from its own host (the hosts after "
       "the stage hosts, stage by stage).",
       false, 0, 1000},
      {"pipeline.background_flow_bytes", VT::kInteger, "bytes", std::int64_t{1073741824},
       "Size of each background flow; each is renewed back to back until the run ends.", false, 1,
       1e15},

      // [inference]
      {"inference.attention_instances", VT::kInteger, "instances", std::int64_t{16},
       "Attention instances, hosts 0..A-1; the section's presence adds AFD decode serving "
       "(MegaScale-Infer / Step-3 attention-FFN disaggregation).",
       false, 1, 4096},
      {"inference.ffn_instances", VT::kInteger, "instances", std::int64_t{2},
       "FFN instances, the hosts after the attention hosts.", false, 1, 4096},
      {"inference.layers", VT::kInteger, "layers", std::int64_t{61},
       "Layers per decode step (61: DeepSeek-V3, Step-3).", false, 1, 10000},
      {"inference.microbatches", VT::kInteger, "microbatches", std::int64_t{3},
       "Micro-batches ping-ponging A -> F -> A per layer (Step-3: 3).", false, 1, 64},
      {"inference.hidden", VT::kInteger, "", std::int64_t{7168}, "Hidden size.", false, 1, 1e9},
      {"inference.dispatch_bytes_per_element", VT::kInteger, "bytes", std::int64_t{1},
       "Dispatch A -> F element size (1: FP8). Dispatch = routed tokens x hidden x this.", false, 1,
       16},
      {"inference.combine_bytes_per_element", VT::kInteger, "bytes", std::int64_t{2},
       "Combine F -> A element size (2: BF16).", false, 1, 16},
      {"inference.routing_fraction", VT::kFloat, "fraction", 1.0,
       "Share of a micro-batch's tokens routed to each FFN instance, rounded up (1: every token "
       "reaches every FFN instance, the worst case; 0.5: one of two).",
       false, 0, 1},
      {"inference.tokens_per_microbatch", VT::kInteger, "requests", std::int64_t{8},
       "Request slots per micro-batch of an attention instance; the batch per instance is this "
       "x microbatches.",
       false, 1, 100000},
      {"inference.attention_fixed_us", VT::kFloat, "us", 20.0,
       "Attention op time: this + per_token x tokens + per_context_token x context tokens.", false,
       0, 1e9},
      {"inference.attention_per_token_us", VT::kFloat, "us", 20.0, "See attention_fixed_us.", false,
       0, 1e9},
      {"inference.attention_per_context_token_ns", VT::kFloat, "ns", 1.0,
       "KV-cache read per context token; see attention_fixed_us.", false, 0, 1e9},
      {"inference.ffn_fixed_us", VT::kFloat, "us", 20.0,
       "FFN op time: this + per_token x tokens received from all attention instances.", false, 0,
       1e9},
      {"inference.ffn_per_token_us", VT::kFloat, "us", 1.56, "See ffn_fixed_us.", false, 0, 1e9},
      {"inference.sample_us", VT::kFloat, "us", 20.0,
       "LM head and sampling of a micro-batch after the last layer.", false, 0, 1e9},
      {"inference.output_tokens_min", VT::kInteger, "tokens", std::int64_t{16},
       "Output length of a request, uniform in [min, max].", false, 2, 1e9},
      {"inference.output_tokens_max", VT::kInteger, "tokens", std::int64_t{48},
       "See output_tokens_min.", false, 2, 1e9},
      {"inference.context_tokens_min", VT::kInteger, "tokens", std::int64_t{1024},
       "Prompt (KV-cache) length of a request, uniform in [min, max]; grows by one per step.",
       false, 0, 1e9},
      {"inference.context_tokens_max", VT::kInteger, "tokens", std::int64_t{8192},
       "See context_tokens_min.", false, 0, 1e9},
      {"inference.batch_load", VT::kFloat, "fraction", 0.8,
       "Poisson arrival rate as a share of what a full batch serves at its compute-only step "
       "time: slots / ((mean output tokens - 1) x full-batch step) x this. Steps at partial "
       "batch are shorter, so the batch settles below this share.",
       false, 0, 100},
      {"inference.arrivals_per_s", VT::kFloat, "requests/s", 0.0,
       "Request arrival rate; used instead of batch_load when batch_load = 0.", false, 0, 1e12},
      {"inference.warmup_requests", VT::kInteger, "requests", std::int64_t{300},
       "The first arrivals, served but not measured.", false, 0, 1e9},
      {"inference.measured_requests", VT::kInteger, "requests", std::int64_t{1000},
       "Requests whose TPOT is reported; the run lasts until they finish.", false, 1, 1e9},
      {"inference.free_communication", VT::kBoolean, "", false,
       "Transfers arrive as they leave (an infinitely fast network): the compute-only bound.",
       false},
      {"inference.prefill_hosts", VT::kInteger, "hosts", std::int64_t{8},
       "Prefill hosts (after the FFN hosts) sending KV caches into the attention hosts; "
       "kv_load x attention hosts / this must be at most 1 (each sender's share).",
       false, 0, 4096},
      {"inference.kv_load", VT::kFloat, "fraction", 0.3,
       "KV-cache load on each attention host's downlink (Poisson, wire overhead included).", false,
       0, 1},
      {"inference.kv_cdf", VT::kString, "", std::string("data/cdf/kv-cache.csv"),
       "KV-cache transfer sizes (a flow-size CDF file, see poisson[].cdf).", false},
      {"inference.bulk_hosts", VT::kInteger, "hosts", std::int64_t{2},
       "Hosts (after the prefill hosts) sending background traffic into the FFN hosts.", false, 0,
       4096},
      {"inference.bulk_load", VT::kFloat, "fraction", 0.3,
       "Background load on each FFN host's downlink.", false, 0, 1},
      {"inference.bulk_cdf", VT::kString, "", std::string("data/cdf/websearch.csv"),
       "Background flow sizes into the FFN hosts.", false},

      // [[poisson]]
      {"poisson[].cdf", VT::kString, "", std::monostate{},
       "Flow-size CDF file (data/cdf/ has web search, data mining and Homa W1-W5). A relative "
       "path is looked up next to the scenario file, then in the working directory. Header "
       "'packets,cdf' (1460-byte packets, interpolated as ns-2 does) or 'bytes,cdf' (discrete).",
       true},
      {"poisson[].load", VT::kFloat, "fraction", std::monostate{},
       "Offered load on each sender's link (or each receiver's, see load_link), wire overhead "
       "included: arrivals = load x link rate x links / (8 x mean wire bytes) per second.",
       true, 1e-6, 10},
      {"poisson[].load_link",
       VT::kString,
       "",
       std::string("sender"),
       "Whose links the load refers to.",
       false,
       -kInf,
       kInf,
       {"sender", "receiver"}},
      {"poisson[].senders", VT::kHostList, "host indices", std::vector<std::int64_t>{},
       "Hosts that send; empty = every host. Each flow picks a sender and a different receiver "
       "uniformly.",
       false, 0, 65535},
      {"poisson[].receivers", VT::kHostList, "host indices", std::vector<std::int64_t>{},
       "Hosts that receive; empty = every host.", false, 0, 65535},
      {"poisson[].start_us", VT::kFloat, "us", 0.0, "No arrivals before this.", false, 0, 1e12},
      {"poisson[].stop_us", VT::kFloat, "us", std::monostate{},
       "No arrivals after this. A measured generator needs stop_us or max_flows.", false, 0, 1e12},
      {"poisson[].max_flows", VT::kInteger, "flows", std::int64_t{0},
       "Stop after this many flows; 0 = no limit.", false, 0, 1e12},
      {"poisson[].class",
       VT::kString,
       "",
       std::string("background"),
       "Class of the flows.",
       false,
       -kInf,
       kInf,
       {"urgent", "background"}},
      {"poisson[].deadline_factor", VT::kFloat, "", 0.0,
       "If > 0, each flow's deadline is start + factor x its ideal FCT (the synthetic deadlines "
       "of D2TCP evaluations; protocols.md §2 cites 2.0).",
       false, 0, 1e6},
      {"poisson[].measured", VT::kBoolean, "", true,
       "true: the run waits for these flows and they count in the results; false: background "
       "that ends with the run.",
       false},
  });
  for (const TransportInfo& t : all_transports()) {
    std::vector<KeySpec> specs = t.keys;
    for (KeySpec& spec : specs) spec.path = "transport." + std::string(t.name) + "." + spec.path;
    add(std::move(specs));
  }
  // Last, so the reference lists them after the scenario itself.
  add(sweep_keys());
  return k;
}

std::vector<std::string> known_tables() {
  std::vector<std::string> tables;
  for (const KeySpec& spec : scenario_keys()) {
    for (std::size_t dot = spec.path.find('.'); dot != std::string::npos;
         dot = spec.path.find('.', dot + 1)) {
      tables.push_back(spec.path.substr(0, dot));
    }
  }
  std::sort(tables.begin(), tables.end());
  tables.erase(std::unique(tables.begin(), tables.end()), tables.end());
  return tables;
}

}  // namespace

const std::vector<KeySpec>& scenario_keys() {
  static const std::vector<KeySpec> keys = build_keys();
  return keys;
}

const KeySpec* find_key(const std::string& path) {
  for (const KeySpec& spec : scenario_keys()) {
    if (spec.path == path) return &spec;
  }
  return nullptr;
}

bool is_known_table(const std::string& path) {
  static const std::vector<std::string> tables = known_tables();
  return std::binary_search(tables.begin(), tables.end(), path);
}

std::string closest_key(const std::string& path) {
  std::vector<std::string> candidates;
  for (const KeySpec& spec : scenario_keys()) candidates.push_back(spec.path);
  for (const std::string& table : known_tables()) candidates.push_back(table);
  return closest_match(path, candidates);
}

}  // namespace safs
