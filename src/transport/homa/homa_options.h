// The options of the Homa transport and its [transport.homa] knobs (unit,
// range, meaning and source). Defaults are the member initializers.
#pragma once

#include <array>
#include <cstdint>

#include "base/time.h"
#include "options/knob.h"

namespace safs {

struct HomaConfig {
  std::uint64_t rtt_bytes = 0;           // 0: one round trip of the longest path, in full packets
  std::uint64_t unsched_bytes = 0;       // 0: rtt_bytes
  std::uint32_t overcommitment = 8;      // messages granted at once (module max_overcommit)
  std::uint64_t grant_window_bytes = 0;  // 0: rtt_bytes (paper); ignored if dynamic_window
  bool dynamic_window = false;           // window = max_incoming / (active + 1) (module)
  std::uint64_t max_incoming_bytes = 0;  // 0: overcommitment x rtt_bytes (module protocol.md)
  int unsched_levels = 4;                // unscheduled levels 7 .. 8 - unsched_levels
  // Message-length cutoffs of unscheduled levels 7, 6, 5 (the lowest takes the rest).
  std::array<std::uint64_t, 3> unsched_cutoffs{200, 2800, 15'000};
  double grant_fifo_fraction = 0.05;  // of granted bytes, to the oldest message
  std::uint64_t fifo_grant_increment = 10'000;
  TimePs resend_after_ps = 500 * kPsPerUs;     // receiver silence before the first RESEND
  TimePs resend_interval_ps = 500 * kPsPerUs;  // between RESENDs while still silent
  TimePs resend_max_wait_ps = 5 * kPsPerMs;    // silence strict priority may excuse, at most
  TimePs sender_probe_ps = kPsPerMs;           // sender silence before it asks (NEED_ACK)
};

KnobTable<HomaConfig> homa_knobs();

}  // namespace safs
