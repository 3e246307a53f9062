// Records when each flow completes and what it would have taken alone.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/flow.h"
#include "base/time.h"

namespace safs {

struct FlowRecord {
  FlowSpec spec;
  TimePs ideal_fct_ps = 0;
  TimePs finish_ps = kTimeNever;  // kTimeNever: did not complete
  // Filled in when the run ends.
  std::uint64_t delivered_bytes = 0;
  std::uint64_t data_packets = 0;
  std::uint64_t control_packets = 0;  // scheduling control (grants, metadata, reports)

  bool complete() const { return finish_ps != kTimeNever; }
  TimePs fct_ps() const { return finish_ps - spec.start_ps; }
  double slowdown() const {
    return static_cast<double>(fct_ps()) / static_cast<double>(ideal_fct_ps);
  }
  bool met_deadline() const { return complete() && finish_ps <= spec.deadline_ps; }
  // How late the flow finished (negative: early), or was at `now` if unfinished.
  TimePs lateness_ps(TimePs now) const { return (complete() ? finish_ps : now) - spec.deadline_ps; }
};

// What the ideal FCT needs of a flow's path (the network's Route has it).
struct PathSummary {
  std::uint64_t bottleneck_bps = 0;
  TimePs propagation_ps = 0;  // sum over the links
  // The links after the first, which the last packet crosses store-and-forward.
  std::span<const std::uint64_t> downstream_rates_bps;
};

// The FCT of a flow alone on an empty path: all its wire bytes at the path's
// bottleneck rate, then the last packet's store-and-forward latency over the
// remaining links and every link's propagation delay.
TimePs ideal_fct_ps(const PathSummary& path, std::uint64_t size_bytes, std::uint32_t mtu_bytes,
                    std::uint32_t header_bytes);

class FlowRecorder final {
 public:
  FlowRecorder() = default;
  explicit FlowRecorder(std::vector<FlowRecord> records) : records_(std::move(records)) {}

  // Flows must be added in id order (0, 1, 2, ...) before they start.
  void add(const FlowRecord& record) { records_.push_back(record); }

  void on_flow_complete(const FlowSpec& flow, TimePs at);

  const std::vector<FlowRecord>& records() const { return records_; }
  FlowRecord& record(std::uint32_t id) { return records_[id]; }
  std::size_t completed() const { return completed_; }
  bool all_complete() const { return completed_ == records_.size(); }

 private:
  std::vector<FlowRecord> records_;  // indexed by flow id
  std::size_t completed_ = 0;
};

}  // namespace safs
