#include "engine/event_queue.h"

#include <bit>
#include <cassert>

namespace safs {

EventQueue::EventQueue()
    : buckets_(kBuckets), occupied_(kBuckets / 64, 0), occupied_words_(kBuckets / 64 / 64, 0) {}

void EventQueue::reserve(std::size_t n) {
  nodes_.reserve(n);
  later_.reserve(n);
}

void EventQueue::choose_front() {
  front_in_calendar_ = calendar_size_ > 0 &&
                       (later_.empty() || runs_before(nodes_[front_node()].event, later_.top()));
}

Event EventQueue::pop() {
  assert(!empty());
  --size_;
  const Event event = front_in_calendar_ ? take_calendar_front() : later_.pop();
  choose_front();
  // Every event left is at or after this one, so the window may start at its
  // bucket; it never moves back, or calendar slots would alias.
  const std::uint64_t slot = slot_of(event.at);
  if (slot > window_slot_) window_slot_ = slot;
  if (front_in_calendar_) {
    // A list is a chain of misses; reading the front node, fetch the next
    // while the front event runs.
    const std::uint32_t after_front = nodes_[front_node()].next;
    if (after_front != kNoNode) __builtin_prefetch(&nodes_[after_front]);
  }
  return event;
}

void EventQueue::push_later(const Event& event) {
  later_.push(event);
  // Only the heap's front can have moved earlier (on a tie the heap's runs
  // first, as choose_front decides).
  if (front_in_calendar_ && !runs_before(nodes_[front_node()].event, event)) {
    front_in_calendar_ = false;
  }
}

std::uint32_t EventQueue::grow_nodes() {
  if (nodes_.size() >= kNoNode) return kNoNode;
  nodes_.emplace_back();
  return static_cast<std::uint32_t>(nodes_.size() - 1);
}

bool EventQueue::link_in_bucket(std::uint32_t index, std::uint64_t slot) {
  const Event& event = nodes_[index].event;
  Bucket& bucket = buckets_[slot & kBucketMask];
  if (bucket.head == kNoNode) {
    bucket.head = bucket.tail = index;
    const std::uint64_t word = (slot & kBucketMask) / 64;
    occupied_[word] |= std::uint64_t{1} << (slot % 64);
    occupied_words_[word / 64] |= std::uint64_t{1} << (word % 64);
  } else if (!runs_before(event, nodes_[bucket.tail].event)) {
    nodes_[bucket.tail].next = index;  // the usual case: the latest so far
    bucket.tail = index;
  } else if (runs_before(event, nodes_[bucket.head].event)) {
    nodes_[index].next = bucket.head;
    bucket.head = index;
  } else {
    std::uint32_t prev = bucket.head;
    for (int step = 0; !runs_before(event, nodes_[nodes_[prev].next].event); ++step) {
      if (step == kMaxListWalk) return false;
      prev = nodes_[prev].next;
    }
    nodes_[index].next = nodes_[prev].next;
    nodes_[prev].next = index;
  }
  if (calendar_size_ == 0 || slot < front_slot_) front_slot_ = slot;
  ++calendar_size_;
  return true;
}

void EventQueue::push_later_instead(std::uint32_t index) {
  push_later(nodes_[index].event);
  nodes_[index].next = free_nodes_;
  free_nodes_ = index;
}

Event EventQueue::take_calendar_front() {
  Bucket& bucket = buckets_[front_slot_ & kBucketMask];
  const std::uint32_t index = bucket.head;
  Node& node = nodes_[index];
  const Event event = node.event;
  bucket.head = node.next;
  node.next = free_nodes_;
  free_nodes_ = index;
  --calendar_size_;
  if (bucket.head == kNoNode) {
    bucket.tail = kNoNode;
    const std::uint64_t word = (front_slot_ & kBucketMask) / 64;
    occupied_[word] &= ~(std::uint64_t{1} << (front_slot_ % 64));
    if (occupied_[word] == 0) occupied_words_[word / 64] &= ~(std::uint64_t{1} << (word % 64));
    if (calendar_size_ > 0) front_slot_ = next_occupied(front_slot_ + 1);
  }
  return event;
}

std::uint64_t EventQueue::next_occupied(std::uint64_t slot) const {
  // The first set bit at or after `slot`'s in the ring, wrapping at its end:
  // an occupied bucket lies within one window of `slot`. The summary of
  // non-zero words skips a sparse calendar's empty stretches.
  const std::uint64_t start = slot & kBucketMask;
  const std::uint64_t start_word = start / 64;
  std::uint64_t bits = occupied_[start_word] & (~std::uint64_t{0} << (start % 64));
  std::uint64_t word = start_word;
  if (bits == 0) {
    word = next_occupied_word(start_word + 1);
    bits = occupied_[word];
  }
  const std::uint64_t found = word * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
  return slot + ((found - start) & kBucketMask);
}

std::uint64_t EventQueue::next_occupied_word(std::uint64_t word) const {
  constexpr std::uint64_t kWords = kBuckets / 64;
  word %= kWords;
  std::uint64_t group = word / 64;
  std::uint64_t bits = occupied_words_[group] & (~std::uint64_t{0} << (word % 64));
  while (bits == 0) {
    group = (group + 1) % occupied_words_.size();
    bits = occupied_words_[group];
  }
  return group * 64 + static_cast<std::uint64_t>(std::countr_zero(bits));
}

}  // namespace safs
