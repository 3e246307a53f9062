// The options of the SAFS transport and its [transport.safs] knobs: DCTCP's
// (the window underneath) and the receiver scheduler's. Defaults are the
// member initializers here and in src/core.
#pragma once

#include <cstdint>

#include "core/receiver_scheduler.h"
#include "net/packet.h"
#include "transport/window/window_options.h"

namespace safs {

struct SafsConfig {
  core::ReceiverConfig receiver;
  std::uint64_t unscheduled_bytes = 0;  // 0: one BDP of the flow's path
  std::uint8_t control_priority = kTopPriority;
  std::uint8_t unscheduled_urgent_priority = 6;
  std::uint8_t unscheduled_background_priority = 2;
  std::uint8_t fallback_priority = 0;
  // How long a flow that never got a grant waits before falling back.
  TimePs first_grant_wait_ps = 200 * kPsPerUs;
  double report_threshold = 0.1;  // re-report an achievable rate when it moves this much
  // Changes within this window share one reallocation (0: reallocate at once).
  TimePs batch_changes_ps = 0;
};

struct SafsOptions {
  // SAFS flows are paced below what their receiver can take, so their DCTCP
  // starts from alpha = 0 (no evidence of congestion yet) instead of Linux's
  // conservative 1; the first marked window still sets alpha from the marks.
  DctcpOptions dctcp{.window = {.initial_alpha = 0}};
  SafsConfig safs;
};

KnobTable<SafsOptions> safs_knobs();

}  // namespace safs
