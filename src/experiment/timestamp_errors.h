// Imperfect no-bubble timestamps: what the transport sees of a flow's
// deadline when the runtime's estimate is wrong, late or missing. The run's
// records keep the true deadline (misses and lateness are measured against
// it); only the transport is told the perturbed one. Sits between every
// workload and the transport (the run's WorkloadHost calls it), so every
// workload kind gets the same model. docs/imperfect-semantics.md gives the
// formulas and the reasons for them.
//
// slack = max(0, true deadline - now - ideal FCT), "now" being the flow's
// start for the timestamp it starts with and the moment of an update for an
// update. The transport sees
//   max(now, true deadline + (bias_of_slack + noise_of_slack x Z) x slack),
// Z standard normal, drawn afresh for every timestamp. Updates are dropped
// with a probability, and the rest delivered update_delay later (in the order
// they were sent). A missing_fraction of the flows with a deadline start
// without one (kTimeNever) and never get one: their updates are not sent.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "base/flow.h"
#include "engine/simulator.h"

namespace safs {

// The [timestamps] section. All zero (the default): timestamps are exact.
struct TimestampErrorModel {
  double bias_of_slack = 0;   // systematic error, in slacks (+: the transport thinks it later)
  double noise_of_slack = 0;  // standard deviation of the random error, in slacks
  TimePs update_delay_ps = 0;
  double update_drop_probability = 0;
  double missing_fraction = 0;  // of the flows with a deadline
  // A consumer that waits for its flow tells the transport so (on_consumer_waiting).
  bool waiting_updates = true;

  bool active() const {
    return bias_of_slack != 0 || noise_of_slack != 0 || update_delay_ps != 0 ||
           update_drop_probability != 0 || missing_fraction != 0;
  }
};

// What the model did to a run's timestamps (summary.json "timestamp_errors").
struct TimestampErrorCounts {
  std::uint64_t flows_with_deadline = 0;
  std::uint64_t flows_without_timestamp = 0;  // missing: started with no deadline
  std::uint64_t updates = 0;                  // sent by the workloads
  std::uint64_t updates_dropped = 0;          // lost, or of a flow without timestamp
  std::uint64_t updates_delayed = 0;          // passed on update_delay later
  std::uint64_t consumer_waits = 0;           // of the updates: a consumer waiting now
};

class TimestampErrors final : public EventHandler {
 public:
  // Hands a perturbed update to the transport.
  using Deliver = std::function<void(std::uint32_t flow_id, TimePs deadline_ps)>;

  // Random draws come from the stream "timestamp_errors" of `run_seed`,
  // keyed by flow id and the timestamp's number within the flow, so a flow's
  // errors do not depend on the order other flows start or update in.
  TimestampErrors(Simulator& sim, TimestampErrorModel model, std::uint64_t run_seed,
                  Deliver deliver);
  TimestampErrors(const TimestampErrors&) = delete;
  TimestampErrors& operator=(const TimestampErrors&) = delete;

  // The flow as the transport is to see it when it starts (`flow` as
  // recorded, with its true deadline and its id).
  FlowSpec as_started(FlowSpec flow, TimePs ideal_fct_ps);
  // The workload moved the flow's timestamp to `deadline_ps` now: deliver it
  // perturbed, later, or not at all.
  void on_update(std::uint32_t flow_id, TimePs deadline_ps, TimePs ideal_fct_ps);
  // The flow's consumer is waiting for it now. A runtime knows that for
  // certain (its receive is blocked), and a consumer that waits has no slack
  // left, so the update is a timestamp of now, passed exactly; it is still
  // an update (dropped, delayed, never sent for a flow without timestamps).
  // Ignored with waiting_updates off, when timestamps are exact (the
  // transport already has the truth), and when the transport was last told
  // a timestamp no later than now (the flow is overdue to it already).
  void on_consumer_waiting(std::uint32_t flow_id);

  bool active() const { return model_.active(); }
  const TimestampErrorModel& model() const { return model_; }
  const TimestampErrorCounts& counts() const { return counts_; }

  void handle_event(EventId id) override;  // a delayed update is due

 private:
  struct FlowState {
    bool missing = false;
    std::uint32_t timestamps = 0;  // drawn so far: the key of the next draw
    TimePs told_ps = kTimeNever;   // the last timestamp delivered to the transport
  };
  struct PendingUpdate {
    std::uint32_t flow_id;
    TimePs deadline_ps;
  };

  FlowState& state(std::uint32_t flow_id);
  void deliver(std::uint32_t flow_id, TimePs deadline_ps);
  TimePs perturbed(TimePs deadline_ps, TimePs now, TimePs ideal_fct_ps, double z) const;

  Simulator& sim_;
  TimestampErrorModel model_;
  std::uint64_t run_seed_;
  Deliver deliver_;
  std::vector<FlowState> flows_;  // by flow id
  // Every update waits the same delay, so they fall due in the order sent.
  std::deque<PendingUpdate> pending_;
  TimestampErrorCounts counts_;
};

}  // namespace safs
