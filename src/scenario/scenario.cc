#include "scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <toml++/toml.h>

#include "scenario/schema.h"
#include "scenario/sections.h"
#include "scenario/suggest.h"
#include "scenario/toml_section.h"
#include "transport/registry.h"
#include "workload/flow_size_cdf.h"
#include "workload/inference/inference_workload.h"
#include "workload/pipeline/pipeline_workload.h"

namespace safs {

namespace {

class Loader {
 public:
  Loader(std::string name, toml::table root) : name_(std::move(name)), root_(std::move(root)) {}

  void apply_override(const std::string& text);
  void validate() { validate_table(root_, "", ""); }
  ExperimentConfig build();

 private:
  [[noreturn]] void fail(const toml::node* node, const std::string& key,
                         const std::string& message) const;
  void validate_table(const toml::table& table, const std::string& schema_prefix,
                      const std::string& shown_prefix);
  void validate_leaf(const toml::node& node, const KeySpec& spec, const std::string& shown);
  // The value at `key` in `table` (schema path `path`), or the schema default.
  Value value(const toml::table& table, const std::string& key, const std::string& path) const;
  double number(const toml::table& t, const std::string& key, const std::string& path) const;
  std::int64_t integer(const toml::table& t, const std::string& key, const std::string& path) const;
  std::string text(const toml::table& t, const std::string& key, const std::string& path) const;
  bool present(const toml::table& t, const std::string& key) const { return t.contains(key); }
  // `table` (may be null) as a SectionReader whose messages name keys `shown`.key.
  TomlSection section_reader(const toml::table* table, const std::string& shown) const;

  void build_topology(ExperimentConfig& config) const;
  void build_flows(ExperimentConfig& config) const;
  void build_bulk(ExperimentConfig& config) const;
  void build_poisson(ExperimentConfig& config) const;
  void build_pipeline(ExperimentConfig& config) const;
  void build_inference(ExperimentConfig& config) const;
  void check_hosts(const toml::table& t, const std::string& shown, int hosts) const;
  std::string resolve_path(const std::string& path) const;

  std::string name_;
  toml::table root_;
  std::vector<std::string> overridden_;  // keys set on the command line
};

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// "flows[2].src" -> "flows[].src": the schema names array entries without an index.
std::string schema_path(const std::string& key) {
  std::string path;
  bool in_index = false;
  for (const char c : key) {
    if (c == '[') path += "[]";
    if (c == '[' || c == ']') {
      in_index = c == '[';
      continue;
    }
    if (!in_index) path += c;
  }
  return path;
}

const toml::table& empty_table() {
  static const toml::table empty;
  return empty;
}

// The largest integer every smaller one of which a double holds exactly.
constexpr std::int64_t kExactIntegerLimit = std::int64_t{1} << 53;

void Loader::fail(const toml::node* node, const std::string& key,
                  const std::string& message) const {
  std::ostringstream out;
  out << name_;
  if (node != nullptr && node->source().begin.line > 0) {
    out << ':' << node->source().begin.line;
  } else {
    for (const std::string& o : overridden_) {
      if (o == key) out << " (--set " << key << ')';
    }
  }
  out << ": " << (key.empty() ? "" : key + ": ") << message;
  throw ScenarioError(out.str());
}

void Loader::apply_override(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ScenarioError("--set " + text + ": expected key=value");
  }
  const std::string key = text.substr(0, eq);
  const std::string raw = text.substr(eq + 1);
  if (find_key(schema_path(key)) == nullptr) {
    const std::string suggestion = closest_key(schema_path(key));
    throw ScenarioError("--set " + text + ": unknown key" +
                        (suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?"));
  }
  // Read the value as TOML; a bare word (dctcp) is taken as a string.
  toml::table parsed;
  try {
    parsed = toml::parse("v = " + raw);
  } catch (const toml::parse_error&) {
    parsed = toml::table{{"v", raw}};
  }
  toml::table* table = &root_;
  std::size_t begin = 0;
  for (std::size_t dot = key.find('.'); dot != std::string::npos; dot = key.find('.', begin)) {
    const std::string part = key.substr(begin, dot - begin);
    begin = dot + 1;
    // "name[i]" selects entry i of an existing array of tables ([[name]]).
    if (const std::size_t open = part.find('['); open != std::string::npos) {
      const std::size_t close = part.find(']', open);
      toml::array* array = table->get_as<toml::array>(part.substr(0, open));
      std::size_t index = 0;
      try {
        index = std::stoul(part.substr(open + 1, close - open - 1));
      } catch (const std::exception&) {
        throw ScenarioError("--set " + text + ": expected name[index] in '" + part + "'");
      }
      if (close != part.size() - 1 || array == nullptr || index >= array->size() ||
          !(*array)[index].is_table()) {
        throw ScenarioError("--set " + text + ": the file has no entry " + part);
      }
      table = (*array)[index].as_table();
      continue;
    }
    auto [it, inserted] = table->insert(part, toml::table{});
    if (!it->second.is_table()) {
      throw ScenarioError("--set " + text + ": " + part + " is not a table");
    }
    table = it->second.as_table();
  }
  table->insert_or_assign(key.substr(begin), *parsed.get("v"));
  overridden_.push_back(key);
}

void Loader::validate_table(const toml::table& table, const std::string& schema_prefix,
                            const std::string& shown_prefix) {
  for (const KeySpec& spec : scenario_keys()) {
    if (!spec.required || spec.path.rfind(schema_prefix + ".", 0) != 0) continue;
    const std::string key = spec.path.substr(schema_prefix.size() + 1);
    if (key.find('.') == std::string::npos && !table.contains(key)) {
      fail(&table, join(shown_prefix, key), "missing (required)");
    }
  }
  for (const auto& [key_node, node] : table) {
    const std::string key(key_node.str());
    const std::string path = join(schema_prefix, key);
    const std::string shown = join(shown_prefix, key);
    if (const KeySpec* spec = find_key(path)) {
      validate_leaf(node, *spec, shown);
    } else if (node.is_table() && is_known_table(path)) {
      validate_table(*node.as_table(), path, shown);
    } else if (node.is_array() && is_known_table(path + "[]")) {
      const toml::array& array = *node.as_array();
      for (std::size_t i = 0; i < array.size(); ++i) {
        const std::string item = shown + "[" + std::to_string(i) + "]";
        if (!array[i].is_table()) fail(&array[i], item, "expected a table ([[" + path + "]])");
        validate_table(*array[i].as_table(), path + "[]", item);
      }
    } else {
      const std::string suggestion = closest_key(path);
      fail(&node, shown,
           "unknown key" +
               (suggestion.empty() ? std::string() : "; did you mean '" + suggestion + "'?"));
    }
  }
}

void Loader::validate_leaf(const toml::node& node, const KeySpec& spec, const std::string& shown) {
  const std::string expected =
      "expected " + type_name(spec.type) + (spec.unit.empty() ? "" : " (" + spec.unit + ")");
  double numeric = 0;
  switch (spec.type) {
    case ValueType::kInteger:
      if (!node.is_integer()) fail(&node, shown, expected);
      numeric = static_cast<double>(node.as_integer()->get());
      break;
    case ValueType::kFloat:
      if (node.is_integer()) {
        // A double holds every integer up to 2^53 exactly; beyond, say so.
        const std::int64_t v = node.as_integer()->get();
        if (v > kExactIntegerLimit || v < -kExactIntegerLimit) {
          fail(&node, shown, expected + ", got an integer beyond 2^53 (write it as 1e19)");
        }
        numeric = static_cast<double>(v);
        break;
      }
      if (!node.is_floating_point()) fail(&node, shown, expected);
      numeric = node.as_floating_point()->get();
      if (!std::isfinite(numeric)) fail(&node, shown, expected + ", got a non-finite value");
      break;
    case ValueType::kString: {
      if (!node.is_string()) fail(&node, shown, expected);
      const std::string& s = node.as_string()->get();
      if (!spec.choices.empty() &&
          std::find(spec.choices.begin(), spec.choices.end(), s) == spec.choices.end()) {
        std::string list;
        for (const std::string& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
        fail(&node, shown, "'" + s + "' is not one of: " + list + did_you_mean(s, spec.choices));
      }
      return;
    }
    case ValueType::kBoolean:
      // 0 and 1 are accepted too, as --set transport.safs.urgent_first=1 has always been.
      if (node.is_integer() && (node.as_integer()->get() == 0 || node.as_integer()->get() == 1)) {
        return;
      }
      if (!node.is_boolean()) fail(&node, shown, expected + " (true or false)");
      return;
    case ValueType::kHostList: {
      const toml::array* list = node.as_array();
      if (list == nullptr) fail(&node, shown, expected + ", e.g. [0, 1, 2]");
      for (const toml::node& item : *list) {
        if (!item.is_integer()) fail(&item, shown, expected);
        const double v = static_cast<double>(item.as_integer()->get());
        if (v < spec.min_value || v > spec.max_value) {
          fail(&item, shown,
               "host index " + std::to_string(static_cast<long long>(v)) + " out of range");
        }
      }
      return;
    }
    case ValueType::kStringList: {
      const toml::array* list = node.as_array();
      if (list == nullptr) fail(&node, shown, expected + ", e.g. [\"a\", \"b\"]");
      for (const toml::node& item : *list) {
        if (!item.is_string()) fail(&item, shown, expected);
      }
      return;
    }
  }
  if (numeric < spec.min_value || numeric > spec.max_value) {
    std::ostringstream out;
    out << "expected a value in [" << spec.min_value << ", " << spec.max_value << "]"
        << (spec.unit.empty() ? "" : " " + spec.unit) << ", got " << numeric;
    fail(&node, shown, out.str());
  }
}

Value Loader::value(const toml::table& table, const std::string& key,
                    const std::string& path) const {
  const KeySpec* spec = find_key(path);
  return section_reader(&table, "").get(key, spec->type).value_or(spec->default_value);
}

TomlSection Loader::section_reader(const toml::table* table, const std::string& shown) const {
  return TomlSection(table, shown,
                     [this](const toml::node* node, const std::string& key,
                            const std::string& message) { fail(node, key, message); });
}

double Loader::number(const toml::table& t, const std::string& key, const std::string& path) const {
  const Value v = value(t, key, path);
  return std::holds_alternative<std::int64_t>(v) ? static_cast<double>(std::get<std::int64_t>(v))
                                                 : std::get<double>(v);
}

std::int64_t Loader::integer(const toml::table& t, const std::string& key,
                             const std::string& path) const {
  return std::get<std::int64_t>(value(t, key, path));
}

std::string Loader::text(const toml::table& t, const std::string& key,
                         const std::string& path) const {
  return std::get<std::string>(value(t, key, path));
}

const toml::table& section(const toml::table& root, const char* name) {
  const toml::table* t = root[name].as_table();
  return t != nullptr ? *t : empty_table();
}

std::uint64_t gbps_to_bps(double gbps) {
  return static_cast<std::uint64_t>(std::llround(gbps * 1e9));
}

void Loader::build_topology(ExperimentConfig& config) const {
  const toml::table& topo = section(root_, "topology");
  const TopologyOptions options = topology_knobs().read(section_reader(&topo, "topology"));
  const std::string kind = text(topo, "kind", "topology.kind");
  TopologySpec& spec = config.topology;
  spec = options.spec;
  spec.fabric_link = spec.host_link;
  const double link_gbps = static_cast<double>(spec.host_link.rate_bps) / 1e9;

  // Keys that belong to another kind are a mistake, not something to ignore.
  const std::vector<std::pair<std::string, std::vector<const char*>>> owners = {
      {"star", {"hosts"}},
      {"leaf_spine",
       {"hosts_per_leaf", "leaves", "spines", "oversubscription", "fabric_link_gbps"}},
      {"fat_tree", {"k", "fabric_link_gbps"}}};
  for (const auto& [owner, keys] : owners) {
    for (const char* key : keys) {
      const bool also_mine = std::any_of(owners.begin(), owners.end(), [&](const auto& o) {
        return o.first == kind &&
               std::find_if(o.second.begin(), o.second.end(),
                            [&](const char* k) { return std::string(k) == key; }) != o.second.end();
      });
      if (owner != kind && !also_mine && present(topo, key)) {
        fail(topo.get(key), std::string("topology.") + key,
             "applies to kind = \"" + owner + "\", not \"" + kind + "\"");
      }
    }
  }

  if (kind == "star") {
    // spec.hosts is all a star needs
  } else if (kind == "leaf_spine") {
    if (present(topo, "fabric_link_gbps") && present(topo, "oversubscription")) {
      fail(topo.get("oversubscription"), "topology.oversubscription",
           "give either fabric_link_gbps or oversubscription, not both");
    }
    const double fabric_gbps = options.fabric_link_gbps.value_or(
        link_gbps * spec.hosts_per_leaf / (spec.spines * options.oversubscription));
    spec.fabric_link.rate_bps = gbps_to_bps(fabric_gbps);
  } else {
    if (spec.fat_tree_k % 2 != 0) fail(topo.get("k"), "topology.k", "must be even");
    if (options.fabric_link_gbps)
      spec.fabric_link.rate_bps = gbps_to_bps(*options.fabric_link_gbps);
  }
  if (spec.num_hosts() < 2) fail(topo.get("kind"), "topology", "needs at least two hosts");
}

void Loader::build_flows(ExperimentConfig& config) const {
  const toml::array* flows = root_["flows"].as_array();
  if (flows == nullptr) return;
  const int hosts = config.topology.num_hosts();
  for (std::size_t i = 0; i < flows->size(); ++i) {
    const toml::table& t = *(*flows)[i].as_table();
    const std::string shown = "flows[" + std::to_string(i) + "]";
    FlowSpec flow;
    flow.id = static_cast<std::uint32_t>(i);
    flow.src = static_cast<int>(integer(t, "src", "flows[].src"));
    flow.dst = static_cast<int>(integer(t, "dst", "flows[].dst"));
    check_hosts(t, shown, hosts);
    flow.size_bytes = static_cast<std::uint64_t>(integer(t, "size_bytes", "flows[].size_bytes"));
    flow.start_ps = us_to_ps(number(t, "start_us", "flows[].start_us"));
    if (present(t, "deadline_us")) {
      flow.deadline_ps = us_to_ps(number(t, "deadline_us", "flows[].deadline_us"));
      if (flow.deadline_ps <= flow.start_ps) {
        fail(t.get("deadline_us"), shown + ".deadline_us", "must be later than start_us");
      }
    }
    flow.flow_class =
        text(t, "class", "flows[].class") == "urgent" ? FlowClass::kUrgent : FlowClass::kBackground;
    flow.dependency = static_cast<std::uint64_t>(integer(t, "dependency", "flows[].dependency"));
    flow.criticality = static_cast<std::uint32_t>(integer(t, "criticality", "flows[].criticality"));
    config.flows.push_back(flow);
  }
}

// Both ends exist and differ.
void Loader::check_hosts(const toml::table& t, const std::string& shown, int hosts) const {
  const char* keys[2] = {"src", "dst"};
  std::int64_t ends[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    ends[i] = t.get(keys[i])->as_integer()->get();
    if (ends[i] >= hosts) {
      fail(t.get(keys[i]), shown + "." + keys[i],
           "host " + std::to_string(ends[i]) + " is out of range (the topology has " +
               std::to_string(hosts) + " hosts, 0.." + std::to_string(hosts - 1) + ")");
    }
  }
  if (ends[0] == ends[1]) fail(t.get("dst"), shown + ".dst", "a flow cannot go to its own host");
}

void Loader::build_bulk(ExperimentConfig& config) const {
  const toml::array* chains = root_["bulk"].as_array();
  if (chains == nullptr) return;
  for (std::size_t i = 0; i < chains->size(); ++i) {
    const toml::table& t = *(*chains)[i].as_table();
    const std::string shown = "bulk[" + std::to_string(i) + "]";
    check_hosts(t, shown, config.topology.num_hosts());
    BulkSpec chain;
    chain.src = static_cast<int>(integer(t, "src", "bulk[].src"));
    chain.dst = static_cast<int>(integer(t, "dst", "bulk[].dst"));
    chain.size_bytes = static_cast<std::uint64_t>(integer(t, "size_bytes", "bulk[].size_bytes"));
    chain.start_ps = us_to_ps(number(t, "start_us", "bulk[].start_us"));
    chain.count = static_cast<std::uint32_t>(integer(t, "count", "bulk[].count"));
    chain.flow_class =
        text(t, "class", "bulk[].class") == "urgent" ? FlowClass::kUrgent : FlowClass::kBackground;
    config.bulk.push_back(chain);
  }
}

void Loader::build_poisson(ExperimentConfig& config) const {
  const toml::array* generators = root_["poisson"].as_array();
  if (generators == nullptr) return;
  const int hosts = config.topology.num_hosts();
  for (std::size_t i = 0; i < generators->size(); ++i) {
    const toml::table& t = *(*generators)[i].as_table();
    const std::string shown = "poisson[" + std::to_string(i) + "]";
    PoissonSpec spec;
    spec.cdf_path = resolve_path(text(t, "cdf", "poisson[].cdf"));
    spec.load = number(t, "load", "poisson[].load");
    spec.per_receiver = text(t, "load_link", "poisson[].load_link") == "receiver";
    for (const auto& [key, target] :
         {std::pair{"senders", &spec.senders}, std::pair{"receivers", &spec.receivers}}) {
      const std::string path = std::string("poisson[].") + key;
      const Value list = value(t, key, path);  // keep it alive for the loop
      for (const std::int64_t h : std::get<std::vector<std::int64_t>>(list)) {
        if (h >= hosts) {
          fail(t.get(key), shown + "." + key,
               "host " + std::to_string(h) + " is out of range (the topology has " +
                   std::to_string(hosts) + " hosts)");
        }
        target->push_back(static_cast<int>(h));
      }
    }
    spec.start_ps = us_to_ps(number(t, "start_us", "poisson[].start_us"));
    if (present(t, "stop_us")) spec.stop_ps = us_to_ps(number(t, "stop_us", "poisson[].stop_us"));
    spec.max_flows = static_cast<std::uint64_t>(integer(t, "max_flows", "poisson[].max_flows"));
    spec.flow_class = text(t, "class", "poisson[].class") == "urgent" ? FlowClass::kUrgent
                                                                      : FlowClass::kBackground;
    spec.deadline_factor = number(t, "deadline_factor", "poisson[].deadline_factor");
    spec.measured = std::get<bool>(value(t, "measured", "poisson[].measured"));
    if (spec.measured && spec.stop_ps == kTimeNever && spec.max_flows == 0) {
      fail(&t, shown, "a measured generator needs stop_us or max_flows (or set measured = false)");
    }
    if (spec.stop_ps <= spec.start_ps)
      fail(t.get("stop_us"), shown + ".stop_us", "must be later than start_us");
    bool any_pair = false;
    const std::vector<int> s_all = spec.senders, r_all = spec.receivers;
    for (int a = 0; a < hosts && !any_pair; ++a) {
      const bool sends = s_all.empty() || std::find(s_all.begin(), s_all.end(), a) != s_all.end();
      for (int b = 0; b < hosts && sends && !any_pair; ++b) {
        const bool receives =
            r_all.empty() || std::find(r_all.begin(), r_all.end(), b) != r_all.end();
        any_pair = receives && a != b;
      }
    }
    if (!any_pair) fail(&t, shown, "no sender has a different host to send to");
    try {
      FlowSizeCdf::load(spec.cdf_path);
    } catch (const std::exception& e) {
      fail(t.get("cdf"), shown + ".cdf", e.what());
    }
    config.poisson.push_back(spec);
  }
}

void Loader::build_pipeline(ExperimentConfig& config) const {
  const toml::table* t = root_["pipeline"].as_table();
  if (t == nullptr) return;
  auto num = [&](const char* key) { return number(*t, key, std::string("pipeline.") + key); };
  auto count = [&](const char* key) { return integer(*t, key, std::string("pipeline.") + key); };
  PipelineWorkload w;
  w.pipeline.schedule = pipeline::parse_schedule(text(*t, "schedule", "pipeline.schedule"));
  w.pipeline.stages = static_cast<int>(count("stages"));
  w.pipeline.microbatches = static_cast<int>(count("microbatches"));
  w.pipeline.t_f = ms_to_ps(num("forward_ms"));
  w.pipeline.t_b = ms_to_ps(num("backward_ms"));
  w.pipeline.t_w = ms_to_ps(num("weight_ms"));
  w.hidden = static_cast<std::uint64_t>(count("hidden"));
  w.sequence = static_cast<std::uint64_t>(count("sequence"));
  w.microbatch_size = static_cast<std::uint64_t>(count("microbatch_size"));
  w.bytes_per_element = static_cast<std::uint64_t>(count("bytes_per_element"));
  w.background_flows_per_stage = static_cast<int>(count("background_flows_per_stage"));
  w.background_flow_bytes = static_cast<std::uint64_t>(count("background_flow_bytes"));
  const Value hosts = value(*t, "stage_hosts", "pipeline.stage_hosts");
  for (const std::int64_t h : std::get<std::vector<std::int64_t>>(hosts)) {
    w.stage_hosts.push_back(static_cast<int>(h));
  }
  if (!w.stage_hosts.empty() && static_cast<int>(w.stage_hosts.size()) != w.pipeline.stages) {
    fail(t->get("stage_hosts"), "pipeline.stage_hosts", "needs one host per stage");
  }
  if (w.pipeline.microbatches < w.pipeline.stages) {
    fail(t->get("microbatches"), "pipeline.microbatches", "must be at least the number of stages");
  }
  if (w.hosts_needed() > config.topology.num_hosts()) {
    fail(t, "pipeline",
         "needs " + std::to_string(w.hosts_needed()) +
             " hosts (stages and background senders); the "
             "topology has " +
             std::to_string(config.topology.num_hosts()));
  }
  config.compute = build_pipeline_graph(w);
  const std::vector<BulkSpec> background = pipeline_background(w);
  config.bulk.insert(config.bulk.end(), background.begin(), background.end());
}

void Loader::build_inference(ExperimentConfig& config) const {
  const toml::table* t = root_["inference"].as_table();
  if (t == nullptr) return;
  if (config.compute) {
    fail(t, "inference", "cannot share a run with [pipeline] (both place GPUs on hosts 0..)");
  }
  auto num = [&](const char* key) { return number(*t, key, std::string("inference.") + key); };
  auto count = [&](const char* key) { return integer(*t, key, std::string("inference.") + key); };
  InferenceWorkload w;
  AfdSpec& afd = w.afd;
  const int attention = static_cast<int>(count("attention_instances"));
  const int ffn = static_cast<int>(count("ffn_instances"));
  const int prefill = static_cast<int>(count("prefill_hosts"));
  const int bulk = static_cast<int>(count("bulk_hosts"));
  int host = 0;
  for (int i = 0; i < attention; ++i) afd.attention_hosts.push_back(host++);
  for (int i = 0; i < ffn; ++i) afd.ffn_hosts.push_back(host++);
  for (int i = 0; i < prefill; ++i) w.prefill_hosts.push_back(host++);
  for (int i = 0; i < bulk; ++i) w.bulk_hosts.push_back(host++);
  if (host > config.topology.num_hosts()) {
    fail(t, "inference",
         "needs " + std::to_string(host) +
             " hosts (attention, FFN, prefill and bulk hosts); the topology has " +
             std::to_string(config.topology.num_hosts()));
  }
  afd.layers = static_cast<int>(count("layers"));
  afd.microbatches = static_cast<int>(count("microbatches"));
  afd.hidden = static_cast<std::uint64_t>(count("hidden"));
  afd.dispatch_bytes_per_element = static_cast<std::uint64_t>(count("dispatch_bytes_per_element"));
  afd.combine_bytes_per_element = static_cast<std::uint64_t>(count("combine_bytes_per_element"));
  afd.routing_fraction = num("routing_fraction");
  afd.max_tokens_per_microbatch = static_cast<int>(count("tokens_per_microbatch"));
  afd.compute.attention_fixed_ps = us_to_ps(num("attention_fixed_us"));
  afd.compute.attention_per_token_ps = us_to_ps(num("attention_per_token_us"));
  afd.compute.attention_per_context_token_ps = ns_to_ps(num("attention_per_context_token_ns"));
  afd.compute.ffn_fixed_ps = us_to_ps(num("ffn_fixed_us"));
  afd.compute.ffn_per_token_ps = us_to_ps(num("ffn_per_token_us"));
  afd.compute.sample_ps = us_to_ps(num("sample_us"));

  RequestMix& mix = w.requests;
  mix.output_tokens_min = static_cast<std::uint32_t>(count("output_tokens_min"));
  mix.output_tokens_max = static_cast<std::uint32_t>(count("output_tokens_max"));
  mix.context_tokens_min = static_cast<std::uint32_t>(count("context_tokens_min"));
  mix.context_tokens_max = static_cast<std::uint32_t>(count("context_tokens_max"));
  // Point at whichever of the pair the file sets (either may be a default).
  auto located = [&](const char* first, const char* second) -> const toml::node* {
    if (const toml::node* n = t->get(first)) return n;
    if (const toml::node* n = t->get(second)) return n;
    return t;
  };
  if (mix.output_tokens_max < mix.output_tokens_min) {
    fail(located("output_tokens_max", "output_tokens_min"), "inference.output_tokens_max",
         "must be at least output_tokens_min (" + std::to_string(mix.output_tokens_min) + ")");
  }
  if (mix.context_tokens_max < mix.context_tokens_min) {
    fail(located("context_tokens_max", "context_tokens_min"), "inference.context_tokens_max",
         "must be at least context_tokens_min (" + std::to_string(mix.context_tokens_min) + ")");
  }
  w.batch_load = num("batch_load");
  mix.arrivals_per_s = num("arrivals_per_s");
  if (w.batch_load <= 0 && mix.arrivals_per_s <= 0) {
    fail(t, "inference", "needs batch_load > 0 or arrivals_per_s > 0");
  }
  w.warmup_requests = static_cast<std::uint32_t>(count("warmup_requests"));
  w.measured_requests = static_cast<std::uint32_t>(count("measured_requests"));
  w.free_communication =
      std::get<bool>(value(*t, "free_communication", "inference.free_communication"));
  if (w.batch_load > 0 && full_batch_step_ps(w) <= 0) {
    fail(t, "inference",
         "batch_load needs a compute time above zero (every *_us and *_ns cost is 0); set "
         "arrivals_per_s instead");
  }
  w.kv_load = num("kv_load");
  w.bulk_load = num("bulk_load");
  // Background generators, each: its load on every receiver link must fit
  // in its senders' links, or the backlog would grow for the whole run.
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
                   afd.attention_hosts.size(), &w.kv_cdf_path},
        Background{"bulk_load", "bulk_hosts", "bulk_cdf", w.bulk_load, w.bulk_hosts.size(),
                   afd.ffn_hosts.size(), &w.bulk_cdf_path}}) {
    if (b.load <= 0 || b.senders == 0 || w.free_communication) continue;  // no generator
    const double per_sender =
        b.load * static_cast<double>(b.receivers) / static_cast<double>(b.senders);
    if (per_sender > 1.0) {
      char share[32];
      std::snprintf(share, sizeof share, "%.2f", per_sender);
      fail(located(b.load_key, b.hosts_key), std::string("inference.") + b.load_key,
           "asks each of the " + std::to_string(b.senders) + " " + b.hosts_key + " for " + share +
               " of its link; add hosts or lower the load");
    }
    const std::string path = std::string("inference.") + b.cdf_key;
    *b.cdf_path = resolve_path(text(*t, b.cdf_key, path));
    try {
      FlowSizeCdf::load(*b.cdf_path);
    } catch (const std::exception& e) {
      fail(t->get(b.cdf_key) != nullptr ? t->get(b.cdf_key) : t, path, e.what());
    }
  }
  if (!w.free_communication) {  // an infinitely fast network has no contention to model
    const std::vector<PoissonSpec> background = inference_background(w);
    config.poisson.insert(config.poisson.end(), background.begin(), background.end());
  }
  config.inference = std::move(w);
}

std::string Loader::resolve_path(const std::string& path) const {
  namespace fs = std::filesystem;
  if (fs::path(path).is_absolute()) return path;
  const fs::path beside = fs::path(name_).parent_path() / path;
  std::error_code error;  // a name too long to look up is reported when the file is opened
  if (fs::exists(beside, error)) return beside.string();
  return path;
}

ExperimentConfig Loader::build() {
  ExperimentConfig config;
  simulation_knobs().apply(section_reader(root_["simulation"].as_table(), "simulation"), config);

  build_topology(config);

  const toml::table& net = section(root_, "network");
  network_knobs().apply(section_reader(&net, "network"), config);
  if (config.network.switches.port_buffer_bytes < config.mtu_bytes + config.header_bytes) {
    fail(net.get("port_buffer_bytes"), "network.port_buffer_bytes",
         "smaller than one full packet (mtu_bytes + header_bytes)");
  }

  const toml::table& transport = section(root_, "transport");
  config.transport = text(transport, "name", "transport.name");
  // [transport.OTHER] tables are validated but unused, so one file can be run
  // with every transport (--transport) and keep each one's tuning.
  if (const toml::table* params = transport[config.transport].as_table()) {
    for (const auto& [key_node, node] : *params) {
      const std::string key(key_node.str());
      config.transport_params[key] =
          value(*params, key, "transport." + config.transport + "." + key);
    }
  }

  build_flows(config);
  build_bulk(config);
  build_poisson(config);
  build_pipeline(config);
  build_inference(config);
  return config;
}

ExperimentConfig load(const std::string& name, toml::table root,
                      const std::vector<std::string>& overrides) {
  Loader loader(name, std::move(root));
  for (const std::string& o : overrides) loader.apply_override(o);
  loader.validate();
  return loader.build();
}

std::string parse_error_text(const std::string& name, const toml::parse_error& e) {
  std::ostringstream out;
  out << name << ':' << e.source().begin.line << ':' << e.source().begin.column << ": "
      << e.description();
  return out.str();
}

}  // namespace

ExperimentConfig parse_scenario(const std::string& text, const std::string& name,
                                const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ScenarioError(parse_error_text(name, e));
  }
  return load(name, std::move(root), overrides);
}

ExperimentConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ": cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_scenario(buffer.str(), path, overrides);
}

}  // namespace safs
