// Plain types of the SAFS policy core. The core does no I/O, keeps no clock
// and knows nothing of the simulator: callers pass time in, as picoseconds on
// their own clock (the simulator's, or CLOCK_MONOTONIC in the runtime).
#pragma once

#include <cstdint>

#include "base/time.h"

namespace safs::core {

using FlowId = std::uint64_t;
// A stream: the transfers one sender sends one receiver in one class (a
// stage boundary across micro-batches, an attention-FFN pair across layers).
// 0: the flow is on no stream.
using StreamId = std::uint64_t;

// Transfers announced before they start (ReceiverScheduler::announce) are
// planned under ids of their own, apart from real flows': the top bit set,
// the sender's host, and the sender's own number for the announcement (which
// the sender matches the planned grant with).
inline constexpr FlowId kPlannedFlowBit = FlowId{1} << 63;
inline FlowId planned_flow_id(std::uint32_t sender, std::uint32_t number) {
  return kPlannedFlowBit | (FlowId{sender} << 32) | number;
}
inline bool is_planned(FlowId id) { return (id & kPlannedFlowBit) != 0; }
inline std::uint32_t planned_number(FlowId id) { return static_cast<std::uint32_t>(id); }
inline std::uint32_t planned_sender(FlowId id) {
  return static_cast<std::uint32_t>((id & ~kPlannedFlowBit) >> 32);
}

// A sender's granted background flows to one receiver, allocated as one
// flow (background streams): bit 62 set, and the sender's host. Planned ids
// (bit 63) are told apart first.
inline constexpr FlowId kBackgroundStreamBit = FlowId{1} << 62;
inline FlowId background_stream_id(std::uint32_t sender) { return kBackgroundStreamBit | sender; }
inline bool is_background_stream(FlowId id) {
  return !is_planned(id) && (id & kBackgroundStreamBit) != 0;
}
inline std::uint32_t background_stream_sender(FlowId id) { return static_cast<std::uint32_t>(id); }

enum class Urgency : std::uint8_t {
  kUrgent,      // feeds a computation that waits for it
  kBackground,  // nobody waits; throughput only
};

// Time to move `bytes` at `rate_bps`, in picoseconds (kTimeNever at rate 0).
inline TimePs transfer_ps(double bytes, double rate_bps) {
  if (rate_bps <= 0) return kTimeNever;
  const double ps = bytes * 8.0 / rate_bps * static_cast<double>(kPsPerSec);
  return ps >= static_cast<double>(kTimeNever) ? kTimeNever : static_cast<TimePs>(ps);
}

// The rate that moves `bytes` in `ps` picoseconds.
inline double rate_for(double bytes, TimePs ps) {
  return bytes * 8.0 / (static_cast<double>(ps) / static_cast<double>(kPsPerSec));
}

}  // namespace safs::core
