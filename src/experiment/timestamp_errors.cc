#include "experiment/timestamp_errors.h"

#include <algorithm>
#include <cmath>

#include "engine/rng.h"

namespace safs {

namespace {

// The latest timestamp the model hands out: 2^62 ps (53 days), far past any
// run and still exact as a double.
constexpr double kLatestPs = 0x1p62;

}  // namespace

TimestampErrors::TimestampErrors(Simulator& sim, TimestampErrorModel model, std::uint64_t run_seed,
                                 Deliver deliver)
    : sim_(sim), model_(model), run_seed_(run_seed), deliver_(std::move(deliver)) {}

TimestampErrors::FlowState& TimestampErrors::state(std::uint32_t flow_id) {
  if (flows_.size() <= flow_id) flows_.resize(flow_id + 1);
  return flows_[flow_id];
}

TimePs TimestampErrors::perturbed(TimePs deadline_ps, TimePs now, TimePs ideal_fct_ps,
                                  double z) const {
  const double slack = std::max(0.0, static_cast<double>(deadline_ps - now - ideal_fct_ps));
  const double error = (model_.bias_of_slack + model_.noise_of_slack * z) * slack;
  if (error == 0) return deadline_ps;  // no slack: the timestamp is passed exactly
  // A projected consumer start is never in the past.
  const double seen =
      std::clamp(static_cast<double>(deadline_ps) + error, static_cast<double>(now), kLatestPs);
  return static_cast<TimePs>(std::llround(seen));
}

FlowSpec TimestampErrors::as_started(FlowSpec flow, TimePs ideal_fct_ps) {
  if (!active() || !flow.has_deadline()) return flow;
  ++counts_.flows_with_deadline;
  FlowState& s = state(flow.id);
  // A fixed number of draws per timestamp, whatever the outcome.
  Rng rng(run_seed_, "timestamp_errors", mix_keys(flow.id, s.timestamps++));
  s.missing = rng.bernoulli(model_.missing_fraction);
  const double z = rng.normal();
  if (s.missing) {
    ++counts_.flows_without_timestamp;
    flow.deadline_ps = kTimeNever;  // the flow keeps its class
    return flow;
  }
  flow.deadline_ps = perturbed(flow.deadline_ps, flow.start_ps, ideal_fct_ps, z);
  s.told_ps = flow.deadline_ps;
  return flow;
}

void TimestampErrors::on_update(std::uint32_t flow_id, TimePs deadline_ps, TimePs ideal_fct_ps) {
  if (!active()) {
    deliver_(flow_id, deadline_ps);
    return;
  }
  ++counts_.updates;
  FlowState& s = state(flow_id);
  Rng rng(run_seed_, "timestamp_errors", mix_keys(flow_id, s.timestamps++));
  const bool lost = rng.bernoulli(model_.update_drop_probability);
  const double z = rng.normal();
  if (lost || s.missing) {
    ++counts_.updates_dropped;
    return;
  }
  const TimePs seen = perturbed(deadline_ps, sim_.now(), ideal_fct_ps, z);
  if (model_.update_delay_ps == 0) {
    deliver(flow_id, seen);
    return;
  }
  ++counts_.updates_delayed;
  pending_.push_back({flow_id, seen});
  sim_.schedule_in(model_.update_delay_ps, this);
}

void TimestampErrors::on_consumer_waiting(std::uint32_t flow_id) {
  if (!active() || !model_.waiting_updates) return;
  if (state(flow_id).told_ps <= sim_.now()) return;  // overdue to the transport already
  ++counts_.consumer_waits;
  // No slack at the deadline "now": perturbed() passes it as it is.
  on_update(flow_id, sim_.now(), 0);
}

void TimestampErrors::handle_event(EventId /*id*/) {
  const PendingUpdate update = pending_.front();
  pending_.pop_front();
  deliver(update.flow_id, update.deadline_ps);
}

void TimestampErrors::deliver(std::uint32_t flow_id, TimePs deadline_ps) {
  state(flow_id).told_ps = deadline_ps;
  deliver_(flow_id, deadline_ps);
}

}  // namespace safs
