// Sinks and routes, as in htsim: a route is the list of sinks a packet visits
// (the egress port of each node on its path, then the receiving host), and
// every sink passes the packet on with forward().
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <vector>

#include "base/time.h"
#include "net/packet.h"

namespace safs {

class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void receive(Packet& packet) = 0;
};

// The sinks of a route, stored inline: forwarding a packet then touches the
// route object only, not a separate heap array (one cache miss less per hop).
class RouteHops {
 public:
  static constexpr std::size_t kMaxHops = 16;  // a fat-tree path needs 7

  RouteHops() = default;
  RouteHops(std::initializer_list<PacketSink*> sinks) {
    for (PacketSink* sink : sinks) push_back(sink);
  }

  void push_back(PacketSink* sink) {
    if (size_ == kMaxHops) throw std::length_error("route longer than 16 hops");
    hops_[size_++] = sink;
  }
  std::size_t size() const { return size_; }
  PacketSink* operator[](std::size_t i) const { return hops_[i]; }
  PacketSink* front() const { return hops_[0]; }
  PacketSink* back() const { return hops_[size_ - 1]; }
  PacketSink* const* begin() const { return hops_.data(); }
  PacketSink* const* end() const { return hops_.data() + size_; }
  bool operator==(const RouteHops& other) const {
    return size_ == other.size_ && std::equal(begin(), end(), other.begin());
  }

 private:
  std::array<PacketSink*, kMaxHops> hops_{};
  std::size_t size_ = 0;
};

struct Route {
  // Packets on this route not yet back in their pool: a transport frees the
  // flow state that holds the route only once none is left, since each of
  // them points here and may still reach the flow's other end. Counted by
  // the transports' packet builders (new_packet.h) and PacketPool::release;
  // first, beside the hops that forwarding reads anyway.
  mutable std::uint32_t packets_alive = 0;
  RouteHops hops;                       // egress ports in order, then the destination sink
  std::vector<std::uint64_t> rate_bps;  // rate of each link on the path
  TimePs propagation_ps = 0;            // sum of the links' propagation delays

  std::size_t links() const { return rate_bps.size(); }
  std::uint64_t bottleneck_bps() const;
  // One packet of `wire_bytes` crossing the empty path, store-and-forward.
  TimePs packet_latency_ps(std::uint64_t wire_bytes) const;
};

// Hands the packet to the next sink on its route. To send from a host, push a
// packet with next_hop = 0 through forward() (hop 0 is the host's NIC port);
// a packet a NIC pulls from its PacketSource must already have next_hop = 1.
inline void forward(Packet& packet) {
  PacketSink* next = packet.route->hops[packet.next_hop++];
  next->receive(packet);
}

}  // namespace safs
