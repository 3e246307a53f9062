#include "timeline/trace_flows.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <string>
#include <utility>

namespace safs::timeline {

namespace {

TimePs end_of(const FlowRecord& r, TimePs run_end_ps) {
  return r.complete() ? r.finish_ps : run_end_ps;
}

void add_flow(const FlowRecord& r, TimePs run_end_ps, trace::Track lane,
              trace::TimeOrderedBatch& batch) {
  const FlowSpec& f = r.spec;
  trace::TraceArgs args;
  args.add("flow", f.id)
      .add("src", f.src)
      .add("size_bytes", f.size_bytes)
      .add("class", to_string(f.flow_class))
      .add("finished", r.complete());
  if (r.complete()) args.add_fixed("fct_ms", ps_to_sec(r.fct_ps()) * 1e3, 6);
  if (f.has_deadline()) {
    args.add_fixed("deadline_ms", ps_to_sec(f.deadline_ps) * 1e3, 6)
        .add("met_deadline", r.met_deadline());
  }
  batch.slice(lane, "flow " + std::to_string(f.id), std::string(to_string(f.flow_class)),
              f.start_ps, end_of(r, run_end_ps), std::move(args));
  if (!f.has_deadline()) return;
  trace::TraceArgs marker;
  marker.add("flow", f.id).add("met", r.met_deadline());
  batch.instant(lane, "no-bubble timestamp", "deadline", f.deadline_ps, std::move(marker));
}

}  // namespace

void trace_receiver_flows(const std::vector<FlowRecord>& records, TimePs run_end_ps,
                          TraceTracks& tracks, trace::TimeOrderedBatch& batch) {
  const trace::TraceWindow& window = batch.window();
  // Per receiver, the flows that show in the window, by start time.
  std::vector<std::vector<const FlowRecord*>> by_receiver;
  for (const FlowRecord& r : records) {
    const TimePs last_ps =
        std::max(end_of(r, run_end_ps), r.spec.has_deadline() ? r.spec.deadline_ps : 0);
    if (!window.overlaps(r.spec.start_ps, last_ps)) continue;
    if (by_receiver.size() <= static_cast<std::size_t>(r.spec.dst)) {
      by_receiver.resize(r.spec.dst + 1);
    }
    by_receiver[r.spec.dst].push_back(&r);
  }
  for (std::size_t host = 0; host < by_receiver.size(); ++host) {
    auto& flows = by_receiver[host];
    std::stable_sort(flows.begin(), flows.end(), [](const FlowRecord* a, const FlowRecord* b) {
      return a->spec.start_ps < b->spec.start_ps;
    });
    // (free from, lane): the lane that has been free longest comes first.
    using Lane = std::pair<TimePs, int>;
    std::priority_queue<Lane, std::vector<Lane>, std::greater<>> free_lanes;
    int lanes = 0;
    for (const FlowRecord* r : flows) {
      int lane = lanes;
      if (!free_lanes.empty() && free_lanes.top().first <= r->spec.start_ps) {
        lane = free_lanes.top().second;
        free_lanes.pop();
      } else {
        ++lanes;
      }
      // The deadline marker sits on the lane too, so the lane stays busy until it.
      const TimePs busy_until_ps =
          std::max(end_of(*r, run_end_ps), r->spec.has_deadline() ? r->spec.deadline_ps : 0);
      free_lanes.push({busy_until_ps, lane});
      add_flow(*r, run_end_ps, tracks.flow_lane(static_cast<int>(host), lane), batch);
    }
  }
}

}  // namespace safs::timeline
