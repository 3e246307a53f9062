// The [sweep] table of a scenario file: the grid `safs-sim sweep` runs and
// the metrics of its combined CSV. Its keys live here, beside their reader;
// the schema table includes them, so files are validated and documented as
// any other key.
#pragma once

#include <string>
#include <vector>

#include "scenario/schema.h"

namespace safs {

struct SweepSpec {
  std::vector<std::string> grid;     // "key=v1,v2,..." per axis
  std::vector<std::string> metrics;  // dotted summary.json paths; empty = all numbers
};

std::vector<KeySpec> sweep_keys();

// Reads [sweep] from a scenario file that load_scenario has accepted.
SweepSpec load_sweep_spec(const std::string& path);

}  // namespace safs
