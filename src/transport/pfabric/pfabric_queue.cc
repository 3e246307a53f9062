#include "transport/pfabric/pfabric_queue.h"

#include <algorithm>
#include <cassert>

namespace safs {

PFabricQueue::PFabricQueue(const BufferLimits& limits)
    : limits_(limits),
      by_min_(MinBefore{this}, MinPosition{this}),
      by_max_(MaxBefore{this}, MaxPosition{this}) {}

Packet* PFabricQueue::enqueue(Packet& packet) {
  const std::uint64_t size = packet.wire_bytes;
  std::uint64_t need = 0;  // bytes that must be freed to admit the packet
  if (bytes_ + size > limits_.port_bytes) need = bytes_ + size - limits_.port_bytes;
  if (limits_.shared != nullptr && !limits_.shared->has_room(packet.wire_bytes)) {
    need = std::max(need, limits_.shared->used_bytes + size - limits_.shared->capacity_bytes);
  }
  packet.next = nullptr;
  if (need == 0) {
    if (packets_ == 0) {
      solo_ = &packet;  // the common pass-through case skips the structures
    } else {
      materialize_solo();
      insert(packet);
    }
    account_in(packet, limits_.shared);
    return nullptr;
  }
  materialize_solo();
  const std::uint32_t v = victim(need);
  // The arrival loses ties: it is the most recent packet of its rank.
  if (v == kNone || packet.rank >= entries_[v].rank) return &packet;
  Packet* evicted = entries_[v].packet;
  remove(v, *flows_.find(entries_[v].flow_key));
  account_out(*evicted, limits_.shared);
  insert(packet);
  account_in(packet, limits_.shared);
  return evicted;
}

Packet* PFabricQueue::dequeue() {
  Packet* packet = nullptr;
  if (solo_ != nullptr) {
    packet = solo_;
    solo_ = nullptr;
  } else if (!by_min_.empty()) {
    // The most urgent packet names the flow; its oldest queued packet leaves.
    FlowTable::Slot* flow = flows_.find(entries_[by_min_.top()].flow_key);
    assert(flow != nullptr);
    const std::uint32_t oldest = flow->head;
    packet = entries_[oldest].packet;
    remove(oldest, *flow);
  } else {
    return nullptr;
  }
  account_out(*packet, limits_.shared);
  return packet;
}

void PFabricQueue::materialize_solo() {
  if (solo_ == nullptr) return;
  insert(*solo_);
  solo_ = nullptr;
}

std::uint32_t PFabricQueue::victim(std::uint64_t bytes_needed) const {
  if (by_max_.empty()) return kNone;
  const std::uint32_t top = by_max_.top();
  if (entries_[top].packet->wire_bytes >= bytes_needed) return top;
  // Rare: the largest-rank packet is too short to make room. Take the
  // largest-rank packet whose eviction does.
  const MaxBefore before{this};
  std::uint32_t best = kNone;
  for (const std::uint32_t id : by_max_.items()) {
    if (entries_[id].packet->wire_bytes < bytes_needed) continue;
    if (best == kNone || before(id, best)) best = id;
  }
  return best;
}

void PFabricQueue::insert(Packet& packet) {
  std::uint32_t id;
  if (!free_entries_.empty()) {
    id = free_entries_.back();
    free_entries_.pop_back();
  } else {
    id = static_cast<std::uint32_t>(entries_.size());
    entries_.emplace_back();
  }
  Entry& e = entries_[id];
  e.packet = &packet;
  e.rank = packet.rank;
  e.order = next_order_++;
  e.flow_key = flow_key(packet);
  e.next_in_flow = kNone;
  FlowTable::Slot& flow = flows_.find_or_insert(e.flow_key);
  e.prev_in_flow = flow.tail;
  if (flow.tail != kNone) {
    entries_[flow.tail].next_in_flow = id;
  } else {
    flow.head = id;
  }
  flow.tail = id;
  by_min_.push(id);
  by_max_.push(id);
}

void PFabricQueue::remove(std::uint32_t id, FlowTable::Slot& flow) {
  Entry& e = entries_[id];
  by_min_.erase(id);
  by_max_.erase(id);
  if (e.prev_in_flow != kNone) {
    entries_[e.prev_in_flow].next_in_flow = e.next_in_flow;
  } else {
    flow.head = e.next_in_flow;
  }
  if (e.next_in_flow != kNone) {
    entries_[e.next_in_flow].prev_in_flow = e.prev_in_flow;
  } else {
    flow.tail = e.prev_in_flow;
  }
  if (flow.head == kNone) flows_.erase(flow);
  e.packet = nullptr;
  free_entries_.push_back(id);
}

// --- FlowTable ---

std::size_t PFabricQueue::FlowTable::home(std::uint64_t key) const {
  // splitmix64 finaliser: flow ids are dense, so spread them.
  key ^= key >> 30;
  key *= 0xbf58476d1ce4e5b9ull;
  key ^= key >> 27;
  key *= 0x94d049bb133111ebull;
  key ^= key >> 31;
  return static_cast<std::size_t>(key) & (slots_.size() - 1);
}

PFabricQueue::FlowTable::Slot* PFabricQueue::FlowTable::find(std::uint64_t key) {
  const std::size_t mask = slots_.size() - 1;
  for (std::size_t i = home(key);; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (!slot.used) return nullptr;
    if (slot.key == key) return &slot;
  }
}

PFabricQueue::FlowTable::Slot& PFabricQueue::FlowTable::find_or_insert(std::uint64_t key) {
  if ((used_ + 1) * 2 > slots_.size()) grow();  // load factor at most 1/2
  const std::size_t mask = slots_.size() - 1;
  std::size_t i = home(key);
  for (; slots_[i].used; i = (i + 1) & mask) {
    if (slots_[i].key == key) return slots_[i];
  }
  Slot& slot = slots_[i];
  slot = Slot{key, kNone, kNone, true};
  ++used_;
  return slot;
}

void PFabricQueue::FlowTable::erase(Slot& slot) {
  // Backward-shift deletion: move later members of the probe run into the
  // hole unless that would put them before their home slot. No tombstones.
  const std::size_t mask = slots_.size() - 1;
  std::size_t hole = static_cast<std::size_t>(&slot - slots_.data());
  for (std::size_t j = (hole + 1) & mask; slots_[j].used; j = (j + 1) & mask) {
    const std::size_t k = home(slots_[j].key);
    const bool stays = hole <= j ? (hole < k && k <= j) : (hole < k || k <= j);
    if (stays) continue;
    slots_[hole] = slots_[j];
    hole = j;
  }
  slots_[hole] = Slot{};
  --used_;
}

void PFabricQueue::FlowTable::grow() {
  std::vector<Slot> old(slots_.size() * 2);
  old.swap(slots_);
  used_ = 0;
  const std::size_t mask = slots_.size() - 1;
  for (const Slot& s : old) {
    if (!s.used) continue;
    std::size_t i = home(s.key);
    while (slots_[i].used) i = (i + 1) & mask;
    slots_[i] = s;
    ++used_;
  }
}

}  // namespace safs
