// Summary statistics over flow records.
#pragma once

#include <cstddef>
#include <vector>

#include "metrics/flow_outcomes.h"
#include "metrics/flow_recorder.h"

namespace safs {

// Percentile by the nearest-rank method (p in [0, 100]); 0 for no values.
double percentile(std::vector<double> values, double p);

struct FlowSummary {
  std::size_t flows = 0;
  std::size_t completed = 0;
  std::size_t with_deadline = 0;
  std::size_t met_deadline = 0;
  // Over flows with a deadline; unfinished flows count as late up to `now`.
  double mean_lateness_s = 0;  // mean of max(0, finish - deadline)
  double max_lateness_s = 0;   // largest finish - deadline (negative: all early)
  double delivered_bytes = 0;  // including partly delivered flows
  double delivered_gbps = 0;   // delivered_bytes over [first start, now]
  double fct_mean_s = 0, fct_p50_s = 0, fct_p99_s = 0, fct_max_s = 0;
  double slowdown_mean = 0, slowdown_p50 = 0, slowdown_p99 = 0;
  double last_finish_s = 0;
  double goodput_gbps = 0;  // completed payload bytes over the span from first start to last finish
};

// `now`: the end of the run. `only`: restrict to one class (nullptr: all).
FlowSummary summarize(const std::vector<FlowRecord>& records, TimePs now,
                      const FlowClass* only = nullptr);
// The same over compact outcomes, with `totals` of each class (indexed by
// FlowClass); the byte and packet totals are integers, so their sums do not
// depend on the order the flows were added in (below 2^53 bytes, exact as
// doubles too).
FlowSummary summarize(const FlowOutcomes& outcomes, const ClassTotals& totals, TimePs now,
                      const FlowClass* only = nullptr);

}  // namespace safs
