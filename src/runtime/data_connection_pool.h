// A sender's idle data connections, kept after their flow's DONE for the
// next flow to the same peer (EndpointConfig::data_reuse): no handshake, and
// the congestion window the last flow opened. Only for peers whose Hello
// advertised wire::kCapDataReuse, whose receivers read the next DataOpen on
// the connection. (A flow that follows another on its connection before its
// DONE takes it directly, not through the pool: send_side_follow.cc.) While
// idle a connection is watched: the receiver never writes on one, so
// anything readable is its close, and it is dropped.
// Each connection remembers whether a flow on it ever set a kernel pacing
// rate (pacer.h: TCP then paces the socket for good), so that a flow that
// must go unpaced can take one that never did.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/endpoint_config.h"
#include "runtime/event_loop.h"
#include "runtime/peer_table.h"

namespace safs::runtime {

class DataConnectionPool {
 public:
  struct Connection {
    int fd = -1;                   // -1: none
    bool kernel_rate_set = false;  // Pacer::kernel_rate_set() of its last flow
  };
  // kPacedFirst: one the kernel paced if there is one (so that the others
  // stay unpaced), else any. kUnpacedOnly: one it never paced, or none.
  enum class Want : std::uint8_t { kPacedFirst, kUnpacedOnly };

  DataConnectionPool(EventLoop& loop, const DataReuse& config);
  ~DataConnectionPool();
  DataConnectionPool(const DataConnectionPool&) = delete;
  DataConnectionPool& operator=(const DataConnectionPool&) = delete;

  // Keeps `fd` (taken from the caller, who has removed it from the loop) for
  // `peer`, unless the receiver closed it already; when the peer already
  // has as many idle as allowed, the oldest of them is closed.
  void give(PeerId peer, Connection connection, std::int64_t now_ns);
  // Of the connections to `peer` that are still open and `want` allows, the
  // one that went idle last (not registered in the loop, the caller's now);
  // fd -1 if none.
  Connection take(PeerId peer, Want want);
  // Closes the peer's idle connections (the peer is gone).
  void close_peer(PeerId peer);
  // Closes those idle longer than the configured timeout.
  void expire(std::int64_t now_ns);
  std::uint64_t idle() const { return idle_.size(); }

 private:
  struct Idle {
    PeerId peer = 0;
    Connection connection;
    std::int64_t since_ns = 0;
  };
  // The newest open idle connection to `peer` whose kernel_rate_set is
  // `kernel_rate_set`, taken out of the pool.
  Connection take_newest(PeerId peer, bool kernel_rate_set);
  void on_closed_by_receiver(int fd);
  // Closes idle_[index] and forgets it.
  void close_at(std::size_t index);

  EventLoop& loop_;
  const DataReuse& config_;
  std::vector<Idle> idle_;  // oldest first; a few per peer
};

}  // namespace safs::runtime
