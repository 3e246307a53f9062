// Runs a ComputeGraph on the simulator: GPUs execute their ops in order,
// finished ops launch their transfers as flows, and arrivals release the ops
// that wait for them. Each transfer carries a no-bubble timestamp: the start
// its consumer op would have if the consumer's GPU ran its queue without
// waiting (never earlier than the plan with free communication). When a GPU
// falls behind, the timestamps of its pending inputs move later and the
// transport is told (the runtime updates SAFS relies on).
//
// Ops may really take longer or shorter than planned (op_jitter.h). The
// timestamps see only what a runtime would know: the planned durations, and
// the real end of each op once it has ended. A running op is expected to end
// at its start plus its planned duration; when it overruns, its GPU's
// timestamps move at its real end.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/flow.h"
#include "engine/timer.h"
#include "workload/compute/compute_graph.h"

namespace safs {

struct ComputeHooks {
  // Starts a flow now and returns its id. Empty: free communication (an
  // infinitely fast network; every transfer arrives when it is launched).
  std::function<std::uint32_t(const FlowSpec&)> launch;
  // An op started: each transfer it will launch is announced, with its
  // projected start (the op's start plus its planned duration). Empty: none.
  std::function<void(const FlowSpec& planned)> announce;
  std::function<void(std::uint32_t flow_id, TimePs deadline_ps)> update_deadline;
  // The flow's consumer op will wait for it from `from_ps` on (its no-bubble
  // timestamp) unless it has arrived by then: the op is its GPU's next and
  // the GPU idles. Called once per flow. Empty: not watched.
  std::function<void(std::uint32_t flow_id, TimePs from_ps)> consumer_waiting;
  std::function<void()> on_finished;  // the last op has ended
};

struct OpRecord {
  TimePs planned_start_ps = 0;  // with free communication
  TimePs start_ps = -1;
  TimePs end_ps = -1;
  TimePs wait_ps = 0;  // the GPU idled this long before it, waiting for inputs
};

struct TransferRecord {
  std::uint32_t flow_id = 0;
  TimePs launched_ps = -1;
  TimePs arrived_ps = -1;
  TimePs first_deadline_ps = 0;  // the no-bubble timestamp at launch
  TimePs deadline_ps = 0;        // the last one the transport was told
  std::uint32_t deadline_updates = 0;
  bool consumer_waited = false;  // consumer_waiting was called for it
};

class ComputeEngine {
 public:
  // `real_duration_ps`: how long each op really takes (empty: as planned,
  // graph.ops[i].duration_ps). `update_threshold_ps`: a timestamp moves only
  // when it changes by more.
  ComputeEngine(Simulator& sim, ComputeGraph graph, ComputeHooks hooks,
                std::vector<TimePs> real_duration_ps = {}, TimePs update_threshold_ps = kPsPerUs);
  ComputeEngine(const ComputeEngine&) = delete;
  ComputeEngine& operator=(const ComputeEngine&) = delete;

  void start();  // every GPU begins at the current time
  // A flow finished; if it is one of our transfers, its consumer may start.
  void on_flow_complete(std::uint32_t flow_id);

  bool finished() const { return ops_done_ == graph_.ops.size(); }
  const ComputeGraph& graph() const { return graph_; }
  const std::vector<OpRecord>& ops() const { return ops_; }
  const std::vector<TransferRecord>& transfers() const { return transfers_; }
  TimePs started_ps() const { return started_ps_; }
  TimePs makespan_ps() const;                                          // last op end - start
  TimePs planned_makespan_ps() const { return planned_makespan_ps_; }  // with free communication
  TimePs busy_ps(int gpu) const;  // its finished ops' durations
  // makespan - busy: the total of the GPU's BubbleAccount (bubble_account.h).
  TimePs bubble_ps(int gpu) const;

 private:
  struct Gpu {
    std::size_t next = 0;  // index into the GPU's order of the next op to start
    bool busy = false;
    TimePs free_since_ps = 0;
    // Index into the order past the last op projected later than its plan
    // (refresh_deadlines stops its walk beyond it).
    std::size_t projected_moved_end = 0;
    std::unique_ptr<Timer> op_end;  // null on a GPU without ops
  };

  void launch(int transfer, int gpu);
  // Transfer `t` as a flow starting at `start_ps` (its id not yet assigned).
  FlowSpec transfer_flow(int t, TimePs start_ps) const;
  void try_start(int gpu);
  void on_op_end(int gpu);
  void refresh_deadlines(int gpu);
  void watch_waiting(int gpu);
  TimePs no_bubble_ps(int op) const;

  Simulator& sim_;
  ComputeGraph graph_;
  ComputeHooks hooks_;
  std::vector<TimePs> real_duration_ps_;  // per op; only the op-end timer reads it
  TimePs update_threshold_ps_;
  std::vector<Gpu> gpus_;
  std::vector<OpRecord> ops_;
  std::vector<TransferRecord> transfers_;
  std::vector<int> inputs_missing_;         // per op
  std::vector<std::vector<int>> produces_;  // per op: the transfers it starts
  std::vector<int> initial_;                // the transfers without a producer, started first
  std::vector<int> transfer_of_flow_;       // by flow id - first id seen; -1: not ours
  std::vector<TimePs> projected_start_ps_;  // per op, refreshed per GPU
  std::uint32_t first_flow_id_ = 0;
  bool any_flow_ = false;
  std::size_t ops_done_ = 0;
  TimePs started_ps_ = 0;
  TimePs planned_makespan_ps_ = 0;
};

}  // namespace safs
