// Eight strict-priority FIFOs sharing one byte-limited buffer, with drop-tail
// admission and ECN marking on the instantaneous queue (DCTCP's switch rule:
// RED with min = max = K and weight 1; background.md §1). As in commodity
// datacenter switches, the threshold applies per queue: a packet is marked by
// the length of its own priority level, so a burst at one level does not mark
// traffic at another.
#pragma once

#include <array>
#include <bit>

#include "net/queue_discipline.h"

namespace safs {

struct PriorityQueueConfig {
  BufferLimits limits;
  // Mark an ECN-capable packet when the bytes already queued at its priority
  // level, on its arrival, exceed this. Max = never mark.
  std::uint64_t ecn_threshold_bytes = std::numeric_limits<std::uint64_t>::max();
};

class alignas(64) StrictPriorityQueue final : public QueueDiscipline {
 public:
  explicit StrictPriorityQueue(const PriorityQueueConfig& config) : config_(config) {}

  Packet* enqueue(Packet& packet) override;
  Packet* dequeue() override;
  const Packet* peek() const override {
    return nonempty_mask_ == 0 ? nullptr : levels_[top_level()].head;
  }

 private:
  // Two levels to a cache line, none split across two.
  struct alignas(32) Fifo {
    Packet* head = nullptr;
    Packet* tail = nullptr;
    std::uint64_t bytes = 0;
  };

  // The highest level holding packets; only when nonempty_mask_ != 0.
  int top_level() const { return 31 - std::countl_zero(nonempty_mask_); }

  // The base's counters, the config and the mask share the first cache
  // line, so an enqueue or dequeue reads that line and its level's.
  PriorityQueueConfig config_;
  std::uint32_t nonempty_mask_ = 0;  // bit i set when level i holds packets
  std::array<Fifo, kNumPriorities> levels_{};
};

}  // namespace safs
