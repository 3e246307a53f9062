#include "timeline/trace_ports.h"

#include <sstream>

#include "console/bad_input.h"

namespace safs::timeline {

namespace {

std::vector<std::size_t> named_ports(const Network& net, const std::string& list,
                                     const std::string& option) {
  std::vector<std::size_t> ports;
  std::istringstream names(list);
  std::string name;
  while (std::getline(names, name, ',')) {
    bool found = false;
    for (std::size_t i = 0; i < net.ports().size() && !found; ++i) {
      if (net.ports()[i]->name() != name) continue;
      ports.push_back(i);
      found = true;
    }
    if (!found) {
      throw console::BadInput(
          option + ": no port named '" + name +
          "' (use receivers, hosts, switches, none or names like switch->host0)");
    }
  }
  return ports;
}

}  // namespace

TracePortSelection select_trace_ports(const Network& net, const std::string& choice,
                                      const std::string& option) {
  if (choice == "none") return {};
  const bool to_hosts = choice == "receivers" || choice == "hosts";
  if (!to_hosts && choice != "switches") return {named_ports(net, choice, option), false};
  TracePortSelection selection;
  selection.only_receivers = choice == "receivers";
  for (std::size_t i = 0; i < net.ports().size(); ++i) {
    if (net.port_at_host(i)) continue;
    if (!to_hosts || net.port_to_host(i)) selection.ports.push_back(i);
  }
  return selection;
}

}  // namespace safs::timeline
