// Packets are recycled through a free list and allocated in blocks, so once
// the pool has grown to the peak number of packets alive at once, sending a
// packet allocates nothing.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "net/packet.h"
#include "net/route.h"

namespace safs {

class PacketPool {
 public:
  PacketPool() = default;
  PacketPool(const PacketPool&) = delete;
  PacketPool& operator=(const PacketPool&) = delete;

  Packet* acquire() {
    if (free_ == nullptr) grow();
    Packet* p = free_;
    free_ = p->next;
    *p = Packet{};
    ++live_;
    return p;
  }
  void release(Packet* p) {
    if (p->route != nullptr) --p->route->packets_alive;
    p->next = free_;
    free_ = p;
    --live_;
  }

  std::size_t live() const { return live_; }
  std::size_t capacity() const { return blocks_.size() * kBlockSize; }

 private:
  static constexpr std::size_t kBlockSize = 4096;
  void grow();

  std::vector<std::unique_ptr<Packet[]>> blocks_;
  Packet* free_ = nullptr;
  std::size_t live_ = 0;
};

}  // namespace safs
