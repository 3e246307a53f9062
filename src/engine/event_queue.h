// The simulator's pending events, popped in (time, scheduling order).
//
// A packet network's events crowd into the next few microseconds: a wire's
// arrival lies one propagation delay plus one packet ahead, a port's
// completion one packet ahead. A heap pays a path of misses from root to leaf
// for each of them; a calendar (Brown, "Calendar queues", CACM 31(10), 1988)
// files each in a bucket of a fixed width and pops by walking the buckets in
// time order, so a pop reads the next bucket, mostly the one it read last.
//
// Here the calendar covers a window of kBuckets buckets from the latest
// popped event's bucket; anything outside it when pushed (timers, flow
// starts) waits in an EventHeap, and each pop takes the earlier of the two
// fronts, so events never move between them. A bucket is a list sorted by
// (time, id), appended to at its tail when, as nearly always, the event is
// the latest in it (ids only grow). Times must not be negative (the
// simulator's never are; push asserts it). bench/README.md, "A calendar for the next
// microseconds", measures it against the heap alone.
#pragma once

#include <cassert>
#include <cstdint>
#include <vector>

#include "base/time.h"
#include "engine/event_heap.h"

namespace safs {

class EventQueue {
 public:
  EventQueue();

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // The earliest event; the queue is not empty. Which side holds it is kept
  // up to date by push and pop, so each of the run loop's several looks at
  // the front is a branch and two loads.
  const Event& top() const {
    assert(!empty());
    return front_in_calendar_ ? nodes_[front_node()].event : later_.top();
  }

  void push(const Event& event) { push(event.at, event.id, event.handler, event.touches); }
  // Inline, and by fields: the caller's values go from registers straight
  // into the node. (An Event built on the stack and copied in halves stalls
  // store forwarding on every push.)
  void push(TimePs at, EventId id, EventHandler* handler, const void* touches) {
    assert(at >= 0);
    ++size_;
    const std::uint64_t slot = slot_of(at);
    // An event before the window (a queue used outside a simulator may go
    // back in time) or beyond it waits in the heap.
    if (slot < window_slot_ || slot - window_slot_ >= kBuckets) {
      push_later(Event{at, id, handler, touches});
      return;
    }
    std::uint32_t index = free_nodes_;
    if (index != kNoNode) {
      free_nodes_ = nodes_[index].next;
    } else if ((index = grow_nodes()) == kNoNode) {
      // 2^32 - 1 nodes in use: the heap takes the rest.
      push_later(Event{at, id, handler, touches});
      return;
    }
    Event& stored = nodes_[index].event;
    stored.at = at;
    stored.id = id;
    stored.handler = handler;
    stored.touches = touches;
    nodes_[index].next = kNoNode;
    if (!link_in_bucket(index, slot)) {
      push_later_instead(index);
    } else if (!front_in_calendar_) {
      choose_front();  // the calendar's front may now run before the heap's
    }
  }
  Event pop();
  void reserve(std::size_t n);

 private:
  // 128 ps buckets, 16384 of them: a window of 2.1 us, which holds a 1 us
  // link's delay plus a 1500-byte packet at 100 Gbit/s (1.12 us) with room.
  // On the k = 16 fat tree (bench/README.md) every push then lands in an empty
  // bucket, at a bucket's tail or (timers) in the heap; at 256 ps a quarter
  // walked a bucket's list.
  static constexpr int kBucketShift = 7;
  static constexpr std::uint64_t kBuckets = std::uint64_t{1} << 14;
  static constexpr std::uint64_t kBucketMask = kBuckets - 1;
  static_assert(kBuckets % (64 * 64) == 0, "whole words of bits, and whole words of those");
  // Far more events than buckets (10^6 pending in the hold model of
  // event_queue_bench, about 60 to a bucket) would make each push walk a long
  // list; past this many steps an event goes to the heap instead, so a push
  // never costs much more than the heap's.
  static constexpr int kMaxListWalk = 2;
  static constexpr std::uint32_t kNoNode = ~std::uint32_t{0};

  struct Node {
    Event event;
    std::uint32_t next = kNoNode;
  };
  struct Bucket {
    std::uint32_t head = kNoNode;
    std::uint32_t tail = kNoNode;
  };

  static std::uint64_t slot_of(TimePs at) { return static_cast<std::uint64_t>(at) >> kBucketShift; }
  // The calendar's earliest node; the calendar is not empty.
  std::uint32_t front_node() const { return buckets_[front_slot_ & kBucketMask].head; }

  // Files nodes_[index] in its bucket, unless that takes more than
  // kMaxListWalk steps down the bucket's list: then it returns false.
  bool link_in_bucket(std::uint32_t index, std::uint64_t slot);
  void push_later(const Event& event);           // to the heap
  void push_later_instead(std::uint32_t index);  // to the heap; frees the node
  // Sets front_in_calendar_ by comparing the two fronts.
  void choose_front();
  Event take_calendar_front();
  // The first occupied slot at or after `slot`; the calendar is not empty.
  std::uint64_t next_occupied(std::uint64_t slot) const;
  // The first non-zero word of occupied_ at or after `word`, wrapping.
  std::uint64_t next_occupied_word(std::uint64_t word) const;
  // A new node at the end of nodes_, or kNoNode if indices are used up.
  std::uint32_t grow_nodes();

  std::vector<Bucket> buckets_;
  std::vector<std::uint64_t> occupied_;        // a bit per bucket
  std::vector<std::uint64_t> occupied_words_;  // a bit per non-zero word of occupied_
  std::vector<Node> nodes_;
  std::uint32_t free_nodes_ = kNoNode;  // a list through Node::next
  std::uint64_t window_slot_ = 0;       // the calendar holds slots [this, this + kBuckets)
  std::uint64_t front_slot_ = 0;        // the earliest occupied slot, if any
  bool front_in_calendar_ = false;      // top() is the calendar's front, not the heap's
  std::size_t calendar_size_ = 0;
  std::size_t size_ = 0;
  EventHeap later_;  // events beyond the window when they were pushed
};

}  // namespace safs
