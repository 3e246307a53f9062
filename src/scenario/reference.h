// docs/scenario-format.md, generated from the schema table.
#pragma once

#include <string>

namespace safs {

std::string scenario_reference_markdown();

}  // namespace safs
