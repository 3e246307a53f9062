// Helpers for queue-discipline tests.
#pragma once

#include <cstdint>
#include <vector>

#include "net/packet_pool.h"
#include "net/queue_discipline.h"

namespace safs::testing {

// Dequeues everything, returning the sequence numbers in service order and
// returning the packets to the pool.
inline std::vector<std::uint64_t> drain_seqs(QueueDiscipline& q, PacketPool& pool) {
  std::vector<std::uint64_t> seqs;
  while (Packet* p = q.dequeue()) {
    seqs.push_back(p->seq);
    pool.release(p);
  }
  return seqs;
}

}  // namespace safs::testing
