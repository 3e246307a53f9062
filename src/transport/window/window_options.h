// The options of the window transports (Reno, DCTCP, D2TCP) and their
// [transport.NAME] knobs. Defaults are the member initializers.
#pragma once

#include <cstdint>

#include "base/time.h"
#include "net/packet.h"
#include "options/knob.h"
#include "transport/window/congestion_control.h"

namespace safs {

// The level of the `-prio` baselines' urgent class: one below kTopPriority.
// The strict-priority queue serves 7 first, then 6; the top level stays for
// control (SAFS's GRANT, META and REPORT and Homa's GRANTs travel there), as
// an operator keeps the top queue for RFC 4594's Network Control class (DSCP
// CS6) above the latency-critical class. DCTCP and D2TCP send nothing at 7,
// so their urgent class is the first thing every queue serves.
inline constexpr std::uint8_t kUrgentClassPriority = kTopPriority - 1;

struct WindowConfig {
  std::uint32_t initial_cwnd_packets = 10;  // RFC 6928
  TimePs rto_min_ps = kPsPerMs;             // datacenter-tuned minimum RTO
  TimePs rto_max_ps = 64 * kPsPerMs;
  std::uint32_t dupack_threshold = 3;  // RFC 5681
  // Linux's recovery mechanisms, each switchable (window_options.cc).
  bool prr = true;            // RFC 6937 for ECN cuts and loss recovery
  bool impatient_rto = true;  // RFC 6582 section 4: re-arm on the first partial ACK only
  bool loss_state = true;     // no ECN cut after a timeout until the loss is repaired
  bool sack = true;           // SACK-based recovery (RFC 6675), as Linux
  // Tail loss probes (RFC 8985 section 7). Off: every result of the
  // evaluation was measured without them (docs/transports.md).
  bool tail_loss_probe = false;
  std::uint32_t initial_alpha = kAlphaOne;  // DCTCP alpha at flow start
  std::uint8_t data_priority = 0;
  std::uint8_t ack_priority = 0;  // ACKs share the data queue, as in a plain TCP network
  // Switch and NIC priority of urgent flows' data and ACKs: a static
  // priority class above background. 0 = one class for every flow.
  std::uint8_t urgent_priority = 0;
};

struct DctcpOptions {
  WindowConfig window;
  unsigned shift_g = 4;  // alpha gain g = 2^-shift_g (RFC 8257, Linux dctcp_shift_g)
};

struct D2tcpOptions {
  DctcpOptions dctcp;
  double d_min = 0.5;  // clamps of the deadline imminence d (D2TCP paper, SIGCOMM 2012)
  double d_max = 2.0;
};

KnobTable<WindowConfig> reno_knobs();
KnobTable<DctcpOptions> dctcp_knobs();
KnobTable<D2tcpOptions> d2tcp_knobs();
// The same keys, urgent_priority defaulting to kUrgentClassPriority: DCTCP
// and D2TCP with urgent flows in a strict-priority class above background.
KnobTable<DctcpOptions> dctcp_prio_knobs();
KnobTable<D2tcpOptions> d2tcp_prio_knobs();

}  // namespace safs
