// The description of one configuration key: type, unit, default, range,
// allowed words and meaning. Scenario validation, `safs-sim reference` and
// docs/scenario-format.md all read these rows; knob tables (options/knob.h)
// produce them, so a key is described once.
#pragma once

#include <cstdint>
#include <limits>
#include <sstream>
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

inline std::string type_name(ValueType type) {
  // In the order of ValueType.
  static const char* const kNames[] = {"integer", "number",           "string",
                                       "boolean", "list of integers", "list of strings"};
  return kNames[static_cast<int>(type)];
}

// As a scenario file would spell it; empty for monostate.
inline std::string value_text(const Value& value) {
  std::ostringstream out;
  if (std::holds_alternative<std::int64_t>(value)) out << std::get<std::int64_t>(value);
  if (std::holds_alternative<double>(value)) out << std::get<double>(value);
  if (std::holds_alternative<std::string>(value)) out << '"' << std::get<std::string>(value) << '"';
  if (std::holds_alternative<bool>(value)) out << (std::get<bool>(value) ? "true" : "false");
  if (const auto* list = std::get_if<std::vector<std::int64_t>>(&value)) {
    out << '[';
    for (std::size_t i = 0; i < list->size(); ++i) out << (i ? ", " : "") << (*list)[i];
    out << ']';
  }
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    out << '[';
    for (std::size_t i = 0; i < list->size(); ++i) {
      out << (i ? ", " : "") << '"' << (*list)[i] << '"';
    }
    out << ']';
  }
  return out.str();
}

}  // namespace safs
