// Which switch ports a trace shows queue depths for (`run --trace-ports`):
// "receivers" (the switch ports toward hosts that receive flows: where incast
// queues build; a port shows once a flow to its host is listed or started), "hosts" (toward
// every host), "switches" (every switch egress port), "none", or a
// comma-separated list of port names as queues.csv spells them
// ("switch->host0").
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "net/network.h"

namespace safs::timeline {

struct TracePortSelection {
  std::vector<std::size_t> ports;  // indices in network order
  bool only_receivers = false;     // show a port only once its host receives a flow
};

// Throws BadInput for an unknown port name, naming `option` (the command-line
// option the choice came from).
TracePortSelection select_trace_ports(const Network& net, const std::string& choice,
                                      const std::string& option = "--trace-ports");

}  // namespace safs::timeline
