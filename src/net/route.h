// Sinks and routes, as in htsim: a route is the list of sinks a packet visits
// (the egress port of each node on its path, then the receiving host), and
// every sink passes the packet on with forward().
#pragma once

#include <cstdint>
#include <vector>

#include "engine/time.h"
#include "net/packet.h"

namespace safs {

class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void receive(Packet& packet) = 0;
};

struct Route {
  std::vector<PacketSink*> hops;      // egress ports in order, then the destination sink
  std::vector<std::uint64_t> rate_bps; // rate of each link on the path
  TimePs propagation_ps = 0;           // sum of the links' propagation delays

  std::size_t links() const { return rate_bps.size(); }
  std::uint64_t bottleneck_bps() const;
  // One packet of `wire_bytes` crossing the empty path, store-and-forward.
  TimePs packet_latency_ps(std::uint64_t wire_bytes) const;
};

inline void forward(Packet& packet) {
  PacketSink* next = packet.route->hops[packet.next_hop++];
  next->receive(packet);
}

}  // namespace safs
