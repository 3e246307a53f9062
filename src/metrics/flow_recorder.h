// Records when each flow completes and what it would have taken alone.
//
// By default every record stays for the run (records()), for tests and
// tools that look at them. A run that streams its records (stream_to) holds
// only the records of live flows: once a flow is complete and its transport
// has freed it (its counts are final), its record goes to the sink, its
// summary outcome into compact per-flow arrays (flow_outcomes.h), and the
// record leaves memory.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/flow.h"
#include "base/time.h"
#include "metrics/flow_outcomes.h"

namespace safs {

struct FlowRecord {
  FlowSpec spec;
  TimePs ideal_fct_ps = 0;
  TimePs finish_ps = kTimeNever;  // kTimeNever: did not complete
  // Filled in when the transport frees the flow, or else when the run ends.
  std::uint64_t delivered_bytes = 0;
  std::uint64_t data_packets = 0;
  std::uint64_t control_packets = 0;  // scheduling control (grants, metadata, reports)
  bool released = false;              // the transport freed the flow: the counts are final

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
  TimePs propagation_ps = 0;  // sum of the links
  // The links after the first, which the last packet crosses store-and-forward.
  std::span<const std::uint64_t> downstream_rates_bps;
};

// The FCT of a flow alone on an empty path: all its wire bytes at the path's
// bottleneck rate, then the last packet's store-and-forward latency over the
// remaining links and every link's propagation delay.
TimePs ideal_fct_ps(const PathSummary& path, std::uint64_t size_bytes, std::uint32_t mtu_bytes,
                    std::uint32_t header_bytes);

struct FlowSummary;

class FlowRecorder final {
 public:
  using Sink = std::function<void(const FlowRecord&)>;

  // From now on each final record goes to `sink` and leaves memory (the
  // records added so far too, once final); records() is then unavailable.
  void stream_to(Sink sink);
  bool streaming() const { return static_cast<bool>(sink_); }

  // Flows must be added in id order (0, 1, 2, ...) before they start.
  void add(const FlowRecord& record);
  void on_flow_complete(const FlowSpec& flow, TimePs at);
  // The transport freed flow `id`: these are its final counts.
  void on_flow_released(std::uint32_t id, std::uint64_t delivered_bytes, std::uint64_t data_packets,
                        std::uint64_t control_packets);

  // Every record, by id (not while streaming).
  const std::vector<FlowRecord>& records() const;
  // The record of flow `id` while it is held; null once streamed out.
  FlowRecord* find(std::uint32_t id);
  const FlowRecord* find(std::uint32_t id) const;
  bool is_complete(std::uint32_t id) const;
  std::size_t size() const { return added_; }  // flows added
  std::size_t completed() const { return completed_; }
  bool all_complete() const { return completed_ == added_; }
  // Records in memory: every one, or while streaming the live flows' only.
  std::size_t held() const { return streaming() ? live_.size() - free_slots_.size() : added_; }

  // Calls f(record) for every record held, in id order.
  template <class F>
  void for_each_held(F f) {
    for (std::uint32_t id = 0; id < added_; ++id) {
      if (FlowRecord* r = find(id)) f(*r);
    }
  }
  // Once the run ends (or pauses) with the counts of the held records set:
  // their outcomes, for the summaries.
  void settle_held();
  FlowSummary summary(TimePs now, const FlowClass* only = nullptr) const;
  // The order-free totals of one class (after settle_held()).
  FlowTotals totals(FlowClass c) const;

 private:
  static constexpr std::uint32_t kGone = UINT32_MAX;

  void release(std::uint32_t id);  // streaming: the record is final

  std::size_t added_ = 0;
  std::size_t completed_ = 0;
  Sink sink_;
  // Not streaming: every record, indexed by flow id.
  std::vector<FlowRecord> records_;
  // Streaming: the held records in reused slots, found by id.
  std::vector<std::uint32_t> slot_of_;  // by flow id; kGone once streamed out
  std::vector<FlowRecord> live_;
  std::vector<std::uint32_t> free_slots_;
  FlowOutcomes outcomes_;        // of the streamed records, and of the held ones once settled
  ClassTotals streamed_totals_;  // of the streamed records
  ClassTotals held_totals_;      // of the held records, when last settled
};

}  // namespace safs
