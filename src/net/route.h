// Sinks and routes, as in htsim: a route is the list of sinks a packet visits
// (the egress port of each node on its path, then the receiving host), and
// every sink passes the packet on with forward().
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>

#include "base/time.h"
#include "net/packet.h"

namespace safs {

class PacketSink {
 public:
  virtual ~PacketSink() = default;
  virtual void receive(Packet& packet) = 0;
};

inline constexpr std::size_t kMaxRouteHops = 16;  // a fat-tree path needs 7

// A route's list of at most N values (its hops, its link rates), stored
// inline: forwarding a packet then touches the route object only, not a
// separate heap array (one cache miss less per hop), and building a route,
// three times per flow, allocates nothing.
template <typename T, std::size_t N>
class RouteList {
 public:
  RouteList() = default;
  RouteList(std::initializer_list<T> values) {
    for (const T& value : values) push_back(value);
  }

  void push_back(const T& value) {
    if (size_ == N) {
      throw std::length_error("route longer than " + std::to_string(kMaxRouteHops) + " hops");
    }
    values_[size_++] = value;
  }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const T& operator[](std::size_t i) const { return values_[i]; }
  const T& front() const { return values_[0]; }
  const T& back() const { return values_[size_ - 1]; }
  const T* data() const { return values_.data(); }
  const T* begin() const { return values_.data(); }
  const T* end() const { return values_.data() + size_; }
  bool operator==(const RouteList& other) const {
    return size_ == other.size_ && std::equal(begin(), end(), other.begin());
  }

 private:
  std::array<T, N> values_{};
  std::size_t size_ = 0;
};

// The sinks of a route: each egress port, then the receiving host.
using RouteHops = RouteList<PacketSink*, kMaxRouteHops>;
// The rate of each link of a route (one fewer than its hops).
using RouteLinkRates = RouteList<std::uint64_t, kMaxRouteHops - 1>;

struct Route {
  // Packets on this route not yet back in their pool: a transport frees the
  // flow state that holds the route only once none is left, since each of
  // them points here and may still reach the flow's other end. Counted by
  // the transports' packet builders (new_packet.h) and PacketPool::release;
  // first, beside the hops that forwarding reads anyway.
  mutable std::uint32_t packets_alive = 0;
  RouteHops hops;             // egress ports in order, then the destination sink
  RouteLinkRates rate_bps;    // rate of each link on the path
  TimePs propagation_ps = 0;  // sum of the links' propagation delays

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
