// A semantic flow: a transfer together with what the computation needs of it.
#pragma once

#include <cstdint>
#include <limits>

#include "core/types.h"

namespace safs::core {

struct SemanticFlow {
  FlowId id = 0;
  std::uint32_t sender = 0;  // the sending host, as the receiver names it
  std::uint64_t size_bytes = 0;
  std::uint64_t remaining_bytes = 0;
  // When the consumer op needs the last byte (receiver clock). kTimeNever for
  // background flows. The producer's runtime derives it from its schedule and
  // moves it as execution moves.
  TimePs no_bubble_ps = kTimeNever;
  // The consumer op this flow feeds. Flows with the same dependency form a
  // group: the consumer starts when the last of them arrives.
  std::uint64_t dependency = 0;
  Urgency urgency = Urgency::kBackground;
  // Higher is more important; under overload it outranks the deadline order.
  std::uint32_t criticality = 0;
  // What the sender says it can achieve (its uplink may be shared by several
  // receivers); infinity until it says otherwise.
  double sender_cap_bps = std::numeric_limits<double>::infinity();
  // The stream it belongs to (0: none), and whether its sender started it
  // under the lease the stream's previous transfer left (so it is already
  // sending at that rate and needs no grant to start).
  StreamId stream = 0;
  bool on_stream_lease = false;

  bool urgent() const { return urgency == Urgency::kUrgent; }
};

}  // namespace safs::core
