// The buffering and scheduling policy of one egress port. The port asks it to
// admit arriving packets and to choose the next one to transmit; everything
// else (serialisation, the wire) is the port's. Strict priority with drop-tail
// and ECN is one implementation; pFabric's "serve the smallest rank, drop the
// largest" is another, behind the same interface.
#pragma once

#include <cstdint>
#include <limits>

#include "base/time.h"
#include "net/packet.h"

namespace safs {

// Optional buffer shared by all ports of one switch (a simple static pool:
// a packet is admitted only if both its port and the pool have room).
struct SharedBuffer {
  std::uint64_t capacity_bytes = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t used_bytes = 0;
  bool has_room(std::uint32_t bytes) const { return used_bytes + bytes <= capacity_bytes; }
};

struct BufferLimits {
  std::uint64_t port_bytes = std::numeric_limits<std::uint64_t>::max();
  SharedBuffer* shared = nullptr;  // nullptr: no shared pool
};

class QueueDiscipline {
 public:
  virtual ~QueueDiscipline() = default;

  // Admits `packet` or drops something. Returns the packet to drop (the
  // arriving one or a victim already queued), or nullptr if nothing is dropped.
  virtual Packet* enqueue(Packet& packet) = 0;
  // Removes the next packet to transmit; nullptr when empty.
  virtual Packet* dequeue() = 0;
  // The packet dequeue() would return now, or nullptr: a hint only, for the
  // port to prefetch before its next transmission (a queued packet has
  // usually left the cache by the time it reaches the head).
  virtual const Packet* peek() const { return nullptr; }

  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t packets() const { return packets_; }
  bool empty() const { return packets_ == 0; }
  std::uint64_t ecn_marks() const { return ecn_marks_; }

 protected:
  void account_in(const Packet& p, SharedBuffer* shared) {
    bytes_ += p.wire_bytes;
    ++packets_;
    if (shared != nullptr) shared->used_bytes += p.wire_bytes;
  }
  void account_out(const Packet& p, SharedBuffer* shared) {
    bytes_ -= p.wire_bytes;
    --packets_;
    if (shared != nullptr) shared->used_bytes -= p.wire_bytes;
  }

  std::uint64_t bytes_ = 0;
  std::uint64_t packets_ = 0;
  std::uint64_t ecn_marks_ = 0;
};

}  // namespace safs
