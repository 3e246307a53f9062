// Every key a scenario file may contain: its type, unit, default, range and
// meaning. The parser validates against this table and takes defaults from it,
// and docs/scenario-format.md is generated from it, so the two cannot drift.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

namespace safs {

enum class ValueType { kInteger, kFloat, kString, kBoolean, kHostList, kStringList };

using Value = std::variant<std::monostate, std::int64_t, double, std::string, bool,
                           std::vector<std::int64_t>, std::vector<std::string>>;

struct KeySpec {
  std::string path;  // "topology.link_gbps"; array-of-table entries as "flows[].src"
  ValueType type;
  std::string unit;
  Value default_value;  // monostate: no default (see `required`)
  std::string doc;
  bool required = false;
  double min_value = -std::numeric_limits<double>::infinity();
  double max_value = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // allowed strings, if restricted
};

// All keys, including [transport.NAME] tables built from the transport registry.
const std::vector<KeySpec>& scenario_keys();
const KeySpec* find_key(const std::string& path);
// Known table paths ("topology", "transport.dctcp", "flows[]").
bool is_known_table(const std::string& path);
// The closest known key or table to `path`, for "did you mean"; empty if none is close.
std::string closest_key(const std::string& path);

std::string type_name(ValueType type);
std::string value_text(const Value& value);

}  // namespace safs
