// Every key a scenario file may contain: its type, unit, default, range and
// meaning, gathered from the knob tables of the sections, the transports and
// the workloads. The parser validates against this table, and
// docs/scenario-format.md is generated from it, so the two cannot drift.
#pragma once

#include <string>
#include <vector>

#include "options/key_spec.h"

namespace safs {

// All keys, including [transport.NAME] tables built from the transport registry.
const std::vector<KeySpec>& scenario_keys();
const KeySpec* find_key(const std::string& path);
// Known table paths ("topology", "transport.dctcp", "flows[]").
bool is_known_table(const std::string& path);
// A section written either as one table or as an array of tables
// ([pipeline] or [[pipeline]]); its keys are named as for the table.
bool is_table_or_array(const std::string& path);
// The closest known key or table to `path`, for "did you mean"; empty if none is close.
std::string closest_key(const std::string& path);

}  // namespace safs
