// One endpoint per host for a transport: each is both the sink the host's
// packets arrive at and the source its NIC pulls packets from (htsim style).
#pragma once

#include <memory>
#include <vector>

#include "net/network.h"
#include "transport/transport.h"

namespace safs {

// Makes Host(owner, h) for every host and attaches it: to the network, or to
// env.attach when the transport shares the hosts with another (TenantMux).
template <typename Host, typename Owner>
std::vector<std::unique_ptr<Host>> attach_host_endpoints(const TransportEnv& env, Owner& owner) {
  std::vector<std::unique_ptr<Host>> hosts;
  for (int h = 0; h < env.net.num_hosts(); ++h) {
    hosts.push_back(std::make_unique<Host>(owner, h));
    if (env.attach != nullptr) {
      env.attach->attach_host(h, hosts.back().get(), hosts.back().get());
    } else {
      env.net.attach_host(h, hosts.back().get(), hosts.back().get());
    }
  }
  return hosts;
}

}  // namespace safs
