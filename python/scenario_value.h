// Python values as TOML text, so a scenario given as a dict (or a set()
// override given as a Python value) is read by the same parser as a file.
#pragma once

#include <string>

#include <pybind11/pybind11.h>

namespace safs::python {

// The dict as a TOML document (tables for dicts, arrays of tables for lists
// of dicts). Throws ScenarioError naming the key of a value TOML cannot hold.
std::string toml_document(const pybind11::dict& scenario);

// One value as TOML, for a "key=value" override: a bool, number, string or
// a list of them (a table's keys are set one by one).
std::string toml_value(const std::string& key, const pybind11::handle& value);

}  // namespace safs::python
