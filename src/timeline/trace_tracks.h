// Where a timeline trace puts things: one process per host (its compute ops
// and bubbles, the grants it sends as a receiver, the flows it receives on as
// many lanes as overlap) and one process for switch queue counters. Threads
// and processes are named the first time they are used, so unused rows
// never appear.
#pragma once

#include <string>
#include <vector>

#include "trace/chrome_trace_writer.h"

namespace safs::timeline {

class TraceTracks {
 public:
  TraceTracks(trace::ChromeTraceWriter& writer, int num_hosts);

  trace::Track compute(int host);
  trace::Track grants(int host);
  trace::Track flow_lane(int host, int lane);
  int queues_pid();

 private:
  trace::Track named(int host, int tid, const std::string& name);

  trace::ChromeTraceWriter& writer_;
  int num_hosts_;
  std::vector<std::vector<bool>> named_;  // per host, per tid
  bool queues_named_ = false;
};

}  // namespace safs::timeline
