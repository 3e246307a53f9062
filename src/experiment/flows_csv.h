// flows.csv's text: its header and one line per flow record.
#pragma once

#include <string>

#include "metrics/flow_recorder.h"

namespace safs {

const std::string& flows_csv_header();
// Appends the record's line, newline included, to `out`.
void append_flows_csv_line(std::string& out, const FlowRecord& record);

}  // namespace safs
