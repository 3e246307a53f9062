#include "net/priority_queue.h"

#include <cassert>

namespace safs {

Packet* StrictPriorityQueue::enqueue(Packet& packet) {
  assert(packet.priority < kNumPriorities);
  packet.priority &= kNumPriorities - 1;
  const BufferLimits& limits = config_.limits;
  if (bytes_ + packet.wire_bytes > limits.port_bytes ||
      (limits.shared != nullptr && !limits.shared->has_room(packet.wire_bytes))) {
    return &packet;  // drop-tail
  }
  Fifo& fifo = levels_[packet.priority];
  if (packet.ecn_capable && fifo.bytes > config_.ecn_threshold_bytes) {
    packet.ce = true;
    ++ecn_marks_;
  }
  account_in(packet, limits.shared);
  fifo.bytes += packet.wire_bytes;

  packet.next = nullptr;
  if (fifo.tail != nullptr) {
    fifo.tail->next = &packet;
  } else {
    fifo.head = &packet;
  }
  fifo.tail = &packet;
  nonempty_mask_ |= 1u << packet.priority;
  return nullptr;
}

Packet* StrictPriorityQueue::dequeue() {
  if (nonempty_mask_ == 0) return nullptr;
  const int level = top_level();
  Fifo& fifo = levels_[level];
  Packet* packet = fifo.head;
  fifo.head = packet->next;
  fifo.bytes -= packet->wire_bytes;
  if (fifo.head == nullptr) {
    fifo.tail = nullptr;
    nonempty_mask_ &= ~(1u << level);
  }
  packet->next = nullptr;
  account_out(*packet, config_.limits.shared);
  return packet;
}

}  // namespace safs
