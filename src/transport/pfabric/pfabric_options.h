// The options of the pFabric transport and its [transport.pfabric] knobs.
// Defaults are the member initializers.
#pragma once

#include <cstdint>

#include "base/time.h"
#include "options/knob.h"

namespace safs {

// What a flow's packets carry as their pFabric priority (Packet::rank,
// smaller first), and what orders a host's flows at its NIC.
enum class PFabricRank : std::uint8_t {
  kRemainingSize,  // bytes not yet acknowledged: SRPT (the paper's default)
  kDeadline,       // the flow's deadline, earliest first (EDF); flows without one
                   // after every deadline flow, by remaining size
};

struct PFabricConfig {
  std::uint32_t initial_window_packets = 0;  // 0: one BDP of the flow's path
  std::uint32_t max_window_packets = 0;      // 0: two path BDPs less one packet
  TimePs rto_ps = 0;                         // 0: derived from the path (see rto_us)
  std::uint32_t probe_after_timeouts = 5;    // consecutive timeouts before probe mode
  // Every switch port's buffer, about 2 x BDP (see the buffer_bytes knob); it
  // also sets the derived RTO. 0: ports keep network.port_buffer_bytes and
  // the RTO is 3 x RTT.
  std::uint64_t switch_buffer_bytes = 234'000;
  PFabricRank rank = PFabricRank::kRemainingSize;
};

KnobTable<PFabricConfig> pfabric_knobs();
// The same keys, rank defaulting to the deadline: pFabric as EDF.
KnobTable<PFabricConfig> pfabric_edf_knobs();

}  // namespace safs
