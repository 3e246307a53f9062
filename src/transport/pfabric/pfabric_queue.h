// pFabric's switch port (Alizadeh et al., SIGCOMM 2013, §4.1; the pFabric
// ns-2 DropTail options deque_prio_, keep_order_ and drop_prio_):
//
// - Dequeue: find the packet with the smallest rank (ties: the earliest
//   queued), then send the EARLIEST-queued packet of that packet's flow. A
//   flow's packets therefore leave in arrival order (no reordering) and a flow
//   whose latest packet became urgent is not starved by its own older ones.
// - Enqueue into a full buffer: the victim is the queued packet with the
//   largest rank (ties: the most recently queued). If the arriving packet's
//   rank is >= the victim's, the arriving packet is dropped instead; otherwise
//   the victim is evicted and returned, and the arrival is admitted.
//   The buffer is a byte budget and packets differ in size: when the largest-
//   rank packet is too short to make room (a flow's last segment, a probe), the
//   victim is the largest-rank packet among those whose eviction does make
//   room (and the arrival is dropped if its rank is >= that one's). With
//   equal-size packets this is exactly "drop the largest rank". The buffer
//   limit is never exceeded (YAPS's pFabric queue instead evicts the one
//   largest-rank packet and may overshoot its limit).
//
// A "flow" is (Packet::flow_id, Packet::src_host), so a flow's data and the
// ACKs of another flow never share a FIFO.
//
// Cost: O(log n) per enqueue and dequeue with n queued packets. Two indexed
// heaps (smallest and largest (rank, arrival)) over a slab of entries, a
// doubly linked FIFO per flow, and an open-addressing flow table; nothing is
// allocated once the slab and table have grown to the peak occupancy. A packet
// that finds the queue empty stays outside these structures until a second
// one arrives (most packets cross an idle port). The only linear step is the
// victim search in the rare case above (the largest-rank packet is too short
// to make room). Measured (README.md): an enqueue plus a dequeue through an
// idle port costs what the strict-priority FIFO's does; with 16-600 packets
// queued it costs 80-140 ns more.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "net/network.h"
#include "net/queue_discipline.h"
#include "transport/pfabric/index_heap.h"

namespace safs {

class PFabricQueue final : public QueueDiscipline {
 public:
  explicit PFabricQueue(const BufferLimits& limits);
  PFabricQueue(const PFabricQueue&) = delete;
  PFabricQueue& operator=(const PFabricQueue&) = delete;

  Packet* enqueue(Packet& packet) override;
  Packet* dequeue() override;

  const BufferLimits& limits() const { return limits_; }
  // Distinct flows with packets queued (for tests).
  std::size_t flows() const { return flows_.size() + (solo_ != nullptr ? 1 : 0); }

 private:
  static constexpr std::uint32_t kNone = std::numeric_limits<std::uint32_t>::max();

  struct Entry {
    Packet* packet = nullptr;
    std::uint64_t rank = 0;
    std::uint64_t order = 0;  // arrival number: FIFO order and tie-breaks
    std::uint64_t flow_key = 0;
    std::uint32_t prev_in_flow = kNone;  // older packet of the same flow
    std::uint32_t next_in_flow = kNone;  // newer packet of the same flow
    std::uint32_t min_pos = kNone;
    std::uint32_t max_pos = kNone;
  };
  // Smallest (rank, order) on top: the next flow to serve.
  struct MinBefore {
    const PFabricQueue* q;
    bool operator()(std::uint32_t a, std::uint32_t b) const {
      const Entry& x = q->entries_[a];
      const Entry& y = q->entries_[b];
      return x.rank != y.rank ? x.rank < y.rank : x.order < y.order;
    }
  };
  struct MinPosition {
    PFabricQueue* q;
    std::uint32_t& operator()(std::uint32_t id) const { return q->entries_[id].min_pos; }
  };
  // Largest (rank, order) on top: the drop victim.
  struct MaxBefore {
    const PFabricQueue* q;
    bool operator()(std::uint32_t a, std::uint32_t b) const {
      const Entry& x = q->entries_[a];
      const Entry& y = q->entries_[b];
      return x.rank != y.rank ? x.rank > y.rank : x.order > y.order;
    }
  };
  struct MaxPosition {
    PFabricQueue* q;
    std::uint32_t& operator()(std::uint32_t id) const { return q->entries_[id].max_pos; }
  };

  // Open addressing with linear probing and backward-shift deletion:
  // flow key -> its oldest and newest queued entries.
  class FlowTable {
   public:
    struct Slot {
      std::uint64_t key = 0;
      std::uint32_t head = kNone;  // oldest entry
      std::uint32_t tail = kNone;  // newest entry
      bool used = false;
    };
    FlowTable() : slots_(16) {}
    Slot* find(std::uint64_t key);
    Slot& find_or_insert(std::uint64_t key);  // new slots have no entries
    void erase(Slot& slot);
    std::size_t size() const { return used_; }

   private:
    std::size_t home(std::uint64_t key) const;
    void grow();
    std::vector<Slot> slots_;
    std::size_t used_ = 0;
  };

  static std::uint64_t flow_key(const Packet& p) {
    return (std::uint64_t{p.flow_id} << 32) | p.src_host;
  }
  // The structures only; the byte accounting is enqueue's and dequeue's.
  void insert(Packet& packet);
  void remove(std::uint32_t entry, FlowTable::Slot& flow);
  // Moves the lone packet of the fast path into the structures.
  void materialize_solo();
  // The entry to evict to admit `bytes_needed` more, or kNone.
  std::uint32_t victim(std::uint64_t bytes_needed) const;

  BufferLimits limits_;
  // A packet that arrived to an empty queue and is still alone in it: most
  // packets leave before another arrives, and skip the heaps and the table.
  Packet* solo_ = nullptr;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> free_entries_;
  IndexHeap<MinBefore, MinPosition> by_min_;
  IndexHeap<MaxBefore, MaxPosition> by_max_;
  FlowTable flows_;
  std::uint64_t next_order_ = 0;
};

}  // namespace safs
