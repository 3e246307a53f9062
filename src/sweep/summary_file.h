// Reading a run's summary.json back: the whole document, one value by its
// dotted path, or every numeric value flattened (for the sweep's CSV).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace safs::sweep {

// Throws BadInput when the file is missing or not JSON.
nlohmann::ordered_json read_summary(const std::string& path);

// The value at "a.b.c", or nullptr.
const nlohmann::ordered_json* lookup(const nlohmann::ordered_json& root,
                                     const std::string& dotted_path);

// Every number and boolean outside lists, by dotted path in document order,
// without the wall-clock measurements and provenance (they differ from run
// to run).
std::vector<std::pair<std::string, nlohmann::ordered_json>> numeric_leaves(
    const nlohmann::ordered_json& root);

}  // namespace safs::sweep
