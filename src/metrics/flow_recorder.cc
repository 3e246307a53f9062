#include "metrics/flow_recorder.h"

#include <stdexcept>
#include <string>
#include <utility>

#include "base/input_error.h"
#include "metrics/summary.h"

namespace safs {

TimePs ideal_fct_ps(const PathSummary& path, std::uint64_t size_bytes, std::uint32_t mtu_bytes,
                    std::uint32_t header_bytes) {
  const std::uint64_t packets = (size_bytes + mtu_bytes - 1) / mtu_bytes;
  const std::uint64_t wire_bytes = size_bytes + packets * header_bytes;
  const std::uint64_t last_wire = size_bytes - (packets - 1) * mtu_bytes + header_bytes;
  // Sizes and rates each in range can still make a transfer longer than
  // int64 picoseconds hold (1e13 bytes at 1 Mbit/s: 2.5 years).
  const Uint128 serial_ps = serialization_ps_wide(wire_bytes, path.bottleneck_bps);
  // Half the range: a deadline is a multiple of it past the flow's start.
  if (serial_ps > static_cast<Uint128>(kTimeNever / 2)) {
    throw InputError(std::to_string(size_bytes) + " bytes at the path's bottleneck of " +
                     std::to_string(path.bottleneck_bps) +
                     " bit/s take longer than half of what simulated time holds (about 53 days)");
  }
  TimePs total = static_cast<TimePs>(serial_ps) + path.propagation_ps;
  for (const std::uint64_t rate_bps : path.downstream_rates_bps) {
    total += serialization_ps(last_wire, rate_bps);
  }
  return total;
}

void FlowRecorder::stream_to(Sink sink) {
  if (streaming()) throw std::logic_error("FlowRecorder::stream_to called twice");
  sink_ = std::move(sink);
  live_ = std::move(records_);  // the records so far take the first slots
  records_.clear();
  for (std::uint32_t id = 0; id < live_.size(); ++id) slot_of_.push_back(id);
  for (std::uint32_t id = 0; id < live_.size(); ++id) {
    if (live_[id].complete() && live_[id].released) release(id);
  }
}

void FlowRecorder::add(const FlowRecord& record) {
  ++added_;
  if (!streaming()) {
    records_.push_back(record);
    return;
  }
  std::uint32_t slot = 0;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(live_.size());
    live_.push_back(record);
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
    live_[slot] = record;
  }
  slot_of_.push_back(slot);
}

const std::vector<FlowRecord>& FlowRecorder::records() const {
  if (streaming()) throw std::logic_error("FlowRecorder::records while streaming");
  return records_;
}

FlowRecord* FlowRecorder::find(std::uint32_t id) {
  return const_cast<FlowRecord*>(std::as_const(*this).find(id));
}

const FlowRecord* FlowRecorder::find(std::uint32_t id) const {
  if (id >= added_) return nullptr;
  if (!streaming()) return &records_[id];
  return slot_of_[id] == kGone ? nullptr : &live_[slot_of_[id]];
}

// A record leaves only once complete.
bool FlowRecorder::is_complete(std::uint32_t id) const {
  const FlowRecord* r = find(id);
  return r == nullptr || r->complete();
}

void FlowRecorder::on_flow_complete(const FlowSpec& flow, TimePs at) {
  FlowRecord& record = *find(flow.id);
  if (record.complete()) return;
  record.finish_ps = at;
  ++completed_;
  if (record.released) release(flow.id);
}

void FlowRecorder::on_flow_released(std::uint32_t id, std::uint64_t delivered_bytes,
                                    std::uint64_t data_packets, std::uint64_t control_packets) {
  FlowRecord& record = *find(id);
  record.delivered_bytes = delivered_bytes;
  record.data_packets = data_packets;
  record.control_packets = control_packets;
  record.released = true;
  if (record.complete()) release(id);
}

void FlowRecorder::release(std::uint32_t id) {
  if (!streaming()) return;
  const std::uint32_t slot = slot_of_[id];
  const FlowRecord& record = live_[slot];
  outcomes_.set(record);
  streamed_totals_[class_index(record.spec.flow_class)].add(record);
  sink_(record);
  slot_of_[id] = kGone;
  free_slots_.push_back(slot);
}

void FlowRecorder::settle_held() {
  if (!streaming()) return;
  held_totals_ = {};
  for_each_held([this](const FlowRecord& r) {
    outcomes_.set(r);
    held_totals_[class_index(r.spec.flow_class)].add(r);
  });
}

FlowSummary FlowRecorder::summary(TimePs now, const FlowClass* only) const {
  if (!streaming()) return summarize(records_, now, only);
  ClassTotals totals = streamed_totals_;
  for (std::size_t c = 0; c < totals.size(); ++c) totals[c] += held_totals_[c];
  return summarize(outcomes_, totals, now, only);
}

FlowTotals FlowRecorder::totals(FlowClass c) const {
  if (streaming()) {
    FlowTotals t = streamed_totals_[class_index(c)];
    t += held_totals_[class_index(c)];
    return t;
  }
  FlowTotals t;
  for (const FlowRecord& r : records_) {
    if (r.spec.flow_class == c) t.add(r);
  }
  return t;
}

}  // namespace safs
