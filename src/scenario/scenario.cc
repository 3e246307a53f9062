#include "scenario/scenario.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include <toml++/toml.h>

#include "experiment/workload_kind.h"
#include "scenario/schema.h"
#include "scenario/sections.h"
#include "scenario/suggest.h"
#include "scenario/toml_section.h"
#include "transport/registry.h"

namespace safs {

namespace {

class Loader {
 public:
  Loader(std::string name, toml::table root) : name_(std::move(name)), root_(std::move(root)) {}

  void apply_override(const std::string& text);
  void validate() { validate_table(root_, "", ""); }
  std::string effective_toml() const {
    std::ostringstream out;
    out << root_ << '\n';
    return out.str();
  }
  ExperimentConfig build();

 private:
  [[noreturn]] void fail(const toml::node* node, const std::string& key,
                         const std::string& message) const;
  void validate_table(const toml::table& table, const std::string& schema_prefix,
                      const std::string& shown_prefix);
  void validate_leaf(const toml::node& node, const KeySpec& spec, const std::string& shown);
  // The value at `key` in `table` (schema path `path`), or the schema default.
  Value value(const toml::table& table, const std::string& key, const std::string& path) const;
  std::string text(const toml::table& t, const std::string& key, const std::string& path) const;
  bool present(const toml::table& t, const std::string& key) const { return t.contains(key); }
  // `table` (may be null) as a SectionReader whose messages name keys `shown`.key.
  TomlSection section_reader(const toml::table* table, const std::string& shown) const;

  Settings transport_params(const toml::table& transport, const std::string& name) const;
  void build_topology(ExperimentConfig& config) const;
  void build_workloads(ExperimentConfig& config) const;
  std::string resolve_path(const std::string& path) const;

  std::string name_;
  toml::table root_;
  std::vector<std::string> overridden_;  // keys set on the command line

 public:
  std::vector<std::string> warnings_;  // what was accepted but probably not meant
};

std::string join(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

// "flows[2].src" -> "flows[].src": the schema names array entries without an
// index; "pipeline[1].stages" -> "pipeline.stages" (a table-or-array section).
std::string schema_path(const std::string& key) {
  std::string path;
  bool in_index = false;
  for (const char c : key) {
    if (c == '[' && !is_table_or_array(path)) path += "[]";
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

// A dotted key of tens of thousands of parts makes a table tree as deep,
// which the TOML library walks by recursion until the stack ends (toml++
// bounds nested values, not key parts; in a table header, an assignment or an
// inline table alike). No scenario key has more than a few parts: `text` is
// scanned, outside strings and comments, for a run of more than kMaxKeyParts
// dots with none of = , [ ] { } or a line end between them (a float or a
// date has one), before the library sees it.
void check_key_parts(const std::string& text, const std::string& where) {
  constexpr int kMaxKeyParts = 32;
  int dots = 0;
  std::size_t line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {  // a string (or quoted key): skipped whole
      const bool multi = text.compare(i, 3, std::string(3, c)) == 0;
      const std::size_t open = multi ? 3 : 1;
      std::size_t j = i + open;
      for (; j < text.size(); ++j) {
        if (text[j] == '\n') {
          if (!multi) break;  // an unterminated string: the parser says so
          ++line;
        }
        if (c == '"' && text[j] == '\\') {
          ++j;
          continue;
        }
        if (text.compare(j, open, std::string(open, c)) == 0) break;
      }
      i = j + open - 1;
      continue;
    }
    if (c == '#') {  // a comment, to the line's end
      while (i + 1 < text.size() && text[i + 1] != '\n') ++i;
      continue;
    }
    if (c == '.') {
      if (++dots > kMaxKeyParts) {
        throw ScenarioError(where + ":" + std::to_string(line) + ": a key of more than " +
                            std::to_string(kMaxKeyParts) + " dotted parts; no scenario key has");
      }
    } else if (c == '\n' || c == '=' || c == ',' || c == '[' || c == ']' || c == '{' || c == '}') {
      dots = 0;
    }
    if (c == '\n') ++line;
  }
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
  // An override changes a workload; it never adds one (a stray
  // --set pipeline.stages would otherwise add a whole training run).
  const std::string section = key.substr(0, key.find_first_of(".["));
  for (const WorkloadKind& kind : workload_kinds()) {
    if (kind.section == section && kind.form != SectionForm::kArray && !root_.contains(section)) {
      throw ScenarioError("--set " + text + ": the scenario has no [" + section +
                          "] section; --set changes a workload but does not add one (add [" +
                          section + "] to the file)");
    }
  }
  // Read the value as TOML; a bare word (dctcp) is taken as a string.
  check_key_parts(raw, "--set " + key);
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
    if (it->second.is_array()) {
      throw ScenarioError("--set " + text + ": the file has several [[" + part +
                          "]] entries; name one, as in " + part + "[0]." + key.substr(begin));
    }
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
    // A quoted key with a dot ("simulation.seed" = 7) is one key of that
    // name, not seed in [simulation]: it would match the schema's path and
    // then never be read.
    if (key.find_first_of(".[]") != std::string::npos) {
      fail(&node, shown,
           "a key with '.', '[' or ']' in its name (quoted?): write the table's key in its "
           "table, or the dotted key unquoted");
    }
    if (const KeySpec* spec = find_key(path)) {
      validate_leaf(node, *spec, shown);
    } else if (node.is_table() && is_known_table(path)) {
      validate_table(*node.as_table(), path, shown);
    } else if (node.is_array() && (is_known_table(path + "[]") || is_table_or_array(path))) {
      const std::string entry_path = is_table_or_array(path) ? path : path + "[]";
      const toml::array& array = *node.as_array();
      for (std::size_t i = 0; i < array.size(); ++i) {
        const std::string item = shown + "[" + std::to_string(i) + "]";
        if (!array[i].is_table()) fail(&array[i], item, "expected a table ([[" + path + "]])");
        validate_table(*array[i].as_table(), entry_path, item);
      }
    } else if (is_table_or_array(path)) {
      fail(&node, shown, "expected a table ([" + path + "]) or tables ([[" + path + "]])");
    } else if (is_known_table(path)) {
      fail(&node, shown, "expected a table ([" + path + "])");
    } else if (is_known_table(path + "[]")) {
      fail(&node, shown, "expected an array of tables ([[" + path + "]])");
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
      // The default is allowed even when it is no choice (an empty "same as").
      const auto* default_text = std::get_if<std::string>(&spec.default_value);
      if (!spec.choices.empty() && (default_text == nullptr || s != *default_text) &&
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
    case ValueType::kHostList:
    case ValueType::kStringList: {
      const bool hosts = spec.type == ValueType::kHostList;
      const toml::array* list = node.as_array();
      if (list == nullptr) {
        fail(&node, shown, expected + (hosts ? ", e.g. [0, 1, 2]" : ", e.g. [\"a\", \"b\"]"));
      }
      for (const toml::node& item : *list) {
        if (hosts ? !item.is_integer() : !item.is_string()) fail(&item, shown, expected);
        if (!hosts) continue;
        const std::int64_t v = item.as_integer()->get();
        const auto x = static_cast<double>(v);
        if (x < spec.min_value || x > spec.max_value) {
          fail(&item, shown, "host index " + std::to_string(v) + " out of range");
        }
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

// The keys given in [transport.NAME]. Tables of other transports are
// validated but unused, so one file can be run with every transport
// (--transport) and keep each one's tuning.
Settings Loader::transport_params(const toml::table& transport, const std::string& name) const {
  Settings params;
  if (const toml::table* table = transport[name].as_table()) {
    for (const auto& [key_node, node] : *table) {
      const std::string key(key_node.str());
      params[key] = value(*table, key, "transport." + name + "." + key);
    }
  }
  return params;
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

// Every workload section, kind by kind in the registry's order; the kinds
// read their tables through a SectionReader.
void Loader::build_workloads(ExperimentConfig& config) const {
  const FileResolver resolve = [this](const std::string& path) { return resolve_path(path); };
  for (const WorkloadKind& kind : workload_kinds()) {
    const std::string name(kind.section);
    if (const toml::table* t = root_[name].as_table(); t != nullptr) {
      kind.read(section_reader(t, name), resolve, config);  // validated: not an array kind
      continue;
    }
    const toml::array* entries = root_[name].as_array();
    for (std::size_t i = 0; entries != nullptr && i < entries->size(); ++i) {
      const std::string shown = name + "[" + std::to_string(i) + "]";
      kind.read(section_reader((*entries)[i].as_table(), shown), resolve, config);
    }
  }
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
  const std::uint64_t packet_bytes = std::uint64_t{config.mtu_bytes} + config.header_bytes;
  if (config.network.switches.port_buffer_bytes < packet_bytes) {
    fail(net.get("port_buffer_bytes"), "network.port_buffer_bytes",
         "smaller than one full packet (mtu_bytes + header_bytes)");
  }
  const std::uint64_t shared_bytes = config.network.switches.shared_buffer_bytes;
  if (shared_bytes > 0 && shared_bytes < packet_bytes) {
    fail(net.get("shared_buffer_bytes"), "network.shared_buffer_bytes",
         "smaller than one full packet (mtu_bytes + header_bytes = " +
             std::to_string(packet_bytes) + "): every packet would be dropped; 0 = no shared pool");
  }

  const toml::table& transport = section(root_, "transport");
  config.transport = text(transport, "name", "transport.name");
  config.transport_params = transport_params(transport, config.transport);
  config.background_transport = text(transport, "background", "transport.background");
  if (config.background_transport == config.transport) config.background_transport.clear();
  if (config.mixed_tenants()) {
    config.background_transport_params = transport_params(transport, config.background_transport);
  }
  // A file may keep every transport's tuning, but a key set on the command
  // line for a transport the run does not use is most likely a mistake.
  const std::string prefix = "transport.";
  for (const std::string& key : overridden_) {
    const std::size_t dot = key.find('.', prefix.size());
    if (key.rfind(prefix, 0) != 0 || dot == std::string::npos) continue;  // not transport.X.key
    const std::string name = key.substr(prefix.size(), dot - prefix.size());
    if (name == config.transport || name == config.background_transport) continue;
    warnings_.push_back("--set " + key + ": the run uses transport " + config.transport +
                        (config.mixed_tenants() ? " and " + config.background_transport : "") +
                        ", so this key is ignored");
  }

  build_workloads(config);
  timestamp_knobs().apply(section_reader(root_["timestamps"].as_table(), "timestamps"), config);
  jitter_knobs().apply(section_reader(root_["jitter"].as_table(), "jitter"), config);
  return config;
}

ExperimentConfig load(const std::string& name, toml::table root,
                      const std::vector<std::string>& overrides, ScenarioNotes* notes) {
  Loader loader(name, std::move(root));
  for (const std::string& o : overrides) loader.apply_override(o);
  loader.validate();
  ExperimentConfig config = loader.build();
  if (notes != nullptr) {
    notes->warnings = loader.warnings_;
    notes->effective_toml = loader.effective_toml();
  }
  return config;
}

std::string parse_error_text(const std::string& name, const toml::parse_error& e) {
  std::ostringstream out;
  out << name << ':' << e.source().begin.line << ':' << e.source().begin.column << ": "
      << e.description();
  return out.str();
}

}  // namespace

ExperimentConfig parse_scenario(const std::string& text, const std::string& name,
                                const std::vector<std::string>& overrides, ScenarioNotes* notes) {
  check_key_parts(text, name);
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ScenarioError(parse_error_text(name, e));
  }
  return load(name, std::move(root), overrides, notes);
}

ExperimentConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                               ScenarioNotes* notes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path + ": cannot open file");
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_scenario(buffer.str(), path, overrides, notes);
}

}  // namespace safs
