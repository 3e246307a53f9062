#include "net/packet_pool.h"

namespace safs {

void PacketPool::grow() {
  blocks_.push_back(std::make_unique<Packet[]>(kBlockSize));
  Packet* block = blocks_.back().get();
  for (std::size_t i = 0; i < kBlockSize; ++i) {
    block[i].next = free_;
    free_ = &block[i];
  }
}

}  // namespace safs
