#include "scenario_value.h"

#include "arguments.h"

#include <cstdint>
#include <sstream>
#include <utility>

#include <toml++/toml.h>

#include "scenario/scenario.h"

namespace py = pybind11;

namespace safs::python {

namespace {

toml::table table_of(const py::dict& dict, const std::string& path, int depth);

// Deeper than any scenario nests (a table in a table in an array of tables):
// a dict or list that contains itself would otherwise recurse until the
// stack ends.
constexpr int kMaxDepth = 64;

std::string joined(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// The C++ side reads text up to a NUL: a key or value with one would be cut
// short, or its message would.
std::string without_nul(std::string text, const std::string& path) {
  if (text.find('\0') != std::string::npos) {
    throw ScenarioError("'" + path +
                        "': a NUL character in a key or string; a scenario holds none");
  }
  return text;
}

// Where a converted value goes: appended to an array, or under a key of a
// table. (Named types, so that converting nested lists instantiates
// convert() once per destination, not once per depth.)
struct AppendTo {
  toml::array& array;
  template <class V>
  void operator()(V&& value) const {
    array.push_back(std::forward<V>(value));
  }
};
struct AssignTo {
  toml::table& table;
  const std::string& key;
  template <class V>
  void operator()(V&& value) const {
    table.insert_or_assign(key, std::forward<V>(value));
  }
};

// Calls put(value) with `value` as the TOML type it maps to.
template <class Put>
void convert(const py::handle& value, const std::string& path, const Put& put, int depth) {
  if (depth > kMaxDepth) {
    const std::string where = path.size() > 80 ? path.substr(0, 80) + "..." : path;
    throw ScenarioError(where + ": nested more than " + std::to_string(kMaxDepth) +
                        " deep (a dict or list that contains itself?)");
  }
  const auto type_name = [&] {
    return py::str(py::type::of(value).attr("__name__")).cast<std::string>();
  };
  // A numpy array of one element has __index__ too: only scalars are values.
  if (py::hasattr(value, "shape") && py::len(value.attr("shape")) > 0) {
    throw ScenarioError(path + ": a numpy " + type_name() + " of shape " +
                        py::str(value.attr("shape")).cast<std::string>() +
                        " is not a scenario value (expected a scalar, or a list)");
  }
  if (py::isinstance<py::bool_>(value) || is_numpy_bool(value)) {
    put(PyObject_IsTrue(value.ptr()) == 1);
  } else if (py::isinstance<py::int_>(value) || PyIndex_Check(value.ptr())) {  // numpy integers too
    const py::int_ integer(py::reinterpret_borrow<py::object>(value));
    const long long v = PyLong_AsLongLong(integer.ptr());
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      throw ScenarioError(path + ": " + py::repr(integer).cast<std::string>() +
                          " does not fit a 64-bit integer");
    }
    put(static_cast<std::int64_t>(v));
  } else if (py::isinstance<py::float_>(value)) {
    put(value.cast<double>());
  } else if (py::isinstance<py::str>(value)) {
    put(without_nul(value.cast<std::string>(), path));
  } else if (py::isinstance<py::dict>(value)) {
    put(table_of(py::reinterpret_borrow<py::dict>(value), path, depth + 1));
  } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
    toml::array array;
    for (const py::handle item : value) convert(item, path, AppendTo{array}, depth + 1);
    put(std::move(array));
  } else {
    throw ScenarioError(path + ": a Python " + type_name() +
                        " is not a scenario value (expected bool, int, float, str, list or dict)");
  }
}

toml::table table_of(const py::dict& dict, const std::string& path, int depth) {
  toml::table table;
  for (const auto& [key, value] : dict) {
    if (!py::isinstance<py::str>(key)) {
      throw ScenarioError(joined(path, py::repr(key).cast<std::string>()) +
                          ": keys must be strings");
    }
    const std::string name = without_nul(key.cast<std::string>(), joined(path, "<key>"));
    convert(value, joined(path, name), AssignTo{table, name}, depth);
  }
  return table;
}

std::string formatted(const toml::table& table) {
  std::ostringstream out;
  // Basic "..." strings, as the CLI's --transport shorthand writes them, so
  // set("transport.name", "safs") is the same override as --transport safs.
  constexpr auto flags =
      toml::toml_formatter::default_flags &
      ~(toml::format_flags::allow_literal_strings | toml::format_flags::allow_multi_line_strings);
  out << toml::toml_formatter(table, flags);
  return out.str();
}

}  // namespace

std::string toml_document(const py::dict& scenario) {
  return formatted(table_of(scenario, "", 0)) + "\n";
}

std::string toml_value(const std::string& key, const py::handle& value) {
  if (py::isinstance<py::dict>(value)) {
    throw ScenarioError(key + ": set a table's keys one by one (set(\"" + key + ".KEY\", value))");
  }
  toml::table holder;
  const std::string v = "v";
  convert(value, key, AssignTo{holder, v}, 0);
  // A list of dicts is an array of tables, which TOML writes as [[v]]
  // sections, not as one value a --set can carry.
  if (const toml::array* array = holder.get_as<toml::array>(v);
      array != nullptr && array->is_array_of_tables()) {
    throw ScenarioError(key +
                        ": a list of tables cannot be set whole; give it in the scenario, "
                        "or set its entries' keys one by one");
  }
  // "v = VALUE"; a long array is wrapped over lines, which one line of
  // overrides reads as well with single spaces (strings hold no line breaks:
  // they are written as basic "..." strings, escaped).
  const std::string text = formatted(holder);
  std::string one_line;
  for (std::size_t i = text.find('=') + 2; i < text.size(); ++i) {
    if (text[i] != '\n') {
      one_line += text[i];
      continue;
    }
    while (i + 1 < text.size() && (text[i + 1] == ' ' || text[i + 1] == '\t')) ++i;
    one_line += ' ';
  }
  return one_line;
}

}  // namespace safs::python
