#include "metrics/summary.h"

#include <algorithm>
#include <cmath>

namespace safs {

namespace {

// The nearest-rank percentile: the value a sort would put at rank
// ceil(p/100 n). Found by selection, which is linear, and reorders `values`:
// a run's millions of flows made sorting them a visible share of its time.
double select_percentile(std::vector<double>& values, double p) {
  if (values.empty()) return 0;
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const std::size_t index =
      std::min(rank < 1 ? 0 : static_cast<std::size_t>(rank) - 1, values.size() - 1);
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(index);
  std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

}  // namespace

double percentile(std::vector<double> values, double p) { return select_percentile(values, p); }

FlowSummary summarize(const std::vector<FlowRecord>& records, TimePs now, const FlowClass* only) {
  FlowOutcomes outcomes;
  ClassTotals totals;
  for (const FlowRecord& r : records) {
    outcomes.set(r);
    totals[class_index(r.spec.flow_class)].add(r);
  }
  return summarize(outcomes, totals, now, only);
}

FlowSummary summarize(const FlowOutcomes& outcomes, const ClassTotals& totals, TimePs now,
                      const FlowClass* only) {
  FlowSummary s;
  FlowTotals t;
  for (const FlowClass c : {FlowClass::kBackground, FlowClass::kUrgent}) {
    if (only == nullptr || *only == c) t += totals[class_index(c)];
  }
  s.flows = t.flows;
  s.delivered_bytes = static_cast<double>(t.delivered_bytes);
  // The sums of doubles run in id order, as they always have.
  std::vector<double> fct, slowdown;
  double lateness_sum = 0;
  TimePs max_lateness = -kTimeNever;
  for (std::uint32_t id = 0; id < outcomes.size(); ++id) {
    if (!outcomes.known(id)) continue;
    if (only != nullptr && outcomes.flow_class(id) != *only) continue;
    if (outcomes.has_deadline(id)) {
      ++s.with_deadline;
      if (outcomes.met_deadline(id)) ++s.met_deadline;
      const TimePs lateness = outcomes.lateness_ps(id, now);
      max_lateness = std::max(max_lateness, lateness);
      lateness_sum += ps_to_sec(std::max<TimePs>(0, lateness));
    }
    if (!outcomes.complete(id)) continue;
    ++s.completed;
    fct.push_back(outcomes.fct_s(id));
    slowdown.push_back(outcomes.slowdown(id));
  }
  const double bytes = static_cast<double>(t.completed_bytes);
  const TimePs first_start = t.first_start_ps, last_finish = t.last_finish_ps;
  if (s.with_deadline > 0) {
    s.mean_lateness_s = lateness_sum / static_cast<double>(s.with_deadline);
    s.max_lateness_s = ps_to_sec(max_lateness);
  }
  if (s.flows > 0 && now > first_start) {
    s.delivered_gbps = s.delivered_bytes * 8 / ps_to_sec(now - first_start) / 1e9;
  }
  if (fct.empty()) return s;
  double sum_fct = 0, sum_slow = 0;
  for (std::size_t i = 0; i < fct.size(); ++i) {
    sum_fct += fct[i];
    sum_slow += slowdown[i];
  }
  const auto n = static_cast<double>(fct.size());
  // In place, no copies (a run's millions of flows).
  s.fct_mean_s = sum_fct / n;
  s.fct_max_s = *std::max_element(fct.begin(), fct.end());
  s.fct_p50_s = select_percentile(fct, 50);
  s.fct_p99_s = select_percentile(fct, 99);
  s.slowdown_mean = sum_slow / n;
  s.slowdown_p50 = select_percentile(slowdown, 50);
  s.slowdown_p99 = select_percentile(slowdown, 99);
  s.last_finish_s = ps_to_sec(last_finish);
  const double span_s = ps_to_sec(last_finish - first_start);
  s.goodput_gbps = span_s > 0 ? bytes * 8 / span_s / 1e9 : 0;
  return s;
}

}  // namespace safs
