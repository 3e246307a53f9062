// An htsim connection matrix as a workload ([connection_matrix]): flows with
// a start time start then; flows waiting on a trigger start when it fires;
// a flow's send_done and recv_done triggers are activated when it completes.
// Triggered flows are registered when they start, so their ids follow the
// order in which the run starts them.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "workload/flow_schedule.h"
#include "workload/htsim/connection_matrix_file.h"
#include "workload/workload.h"

namespace safs {

struct ConnectionMatrixSpec {
  ConnectionMatrixFile file;
  std::string path;  // for describe and messages
  FlowClass flow_class = FlowClass::kBackground;
  bool measured = true;
};

std::unique_ptr<Workload> make_workload(const ConnectionMatrixSpec& spec, WorkloadHost& host);
std::string describe_workload(const ConnectionMatrixSpec& spec);

class ConnectionMatrixWorkload final : public Workload {
 public:
  ConnectionMatrixWorkload(const ConnectionMatrixSpec& spec, WorkloadHost& host);

  void arm() override { timed_->arm(); }
  void on_flow_complete(const FlowSpec& flow, TimePs at_ps) override;
  bool measured() const override { return measured_; }
  bool finished() const override { return completed_ == connections_.size(); }
  std::optional<WorkloadProgress> progress() const override;
  std::string unfinished_note() const override;
  void report(RunReport& report) const override;

 private:
  struct TriggerState {
    CmTrigger trigger;
    std::vector<std::size_t> waiting;  // connections started by it, in file order
    std::size_t next = 0;              // multishot: the next one to start
    std::uint32_t activations = 0;
    bool fired = false;  // oneshot and barrier fire once
  };

  void activate(std::uint32_t trigger_id, TimePs now);
  void start(std::size_t connection, TimePs now);

  WorkloadHost& host_;
  std::vector<CmConnection> connections_;
  FlowClass flow_class_;
  bool measured_;
  std::unique_ptr<FlowSchedule> timed_;                           // the flows with a start time
  std::unordered_map<std::uint32_t, std::size_t> connection_of_;  // flow id -> connection
  std::unordered_map<std::uint32_t, TriggerState> triggers_;
  std::size_t completed_ = 0;
  std::size_t late_activations_ = 0;  // of a oneshot trigger that had fired already
};

}  // namespace safs
