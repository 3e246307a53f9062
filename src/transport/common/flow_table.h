// One side's per-flow state of a transport (its senders' or its receivers'),
// found by flow id. Each entry is allocated on its own, so its address never
// changes (packets point at the routes inside it, timers at the entry) and
// one side can release its entry when it is done without touching the other.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace safs {

template <typename Entry>
class FlowTable {
 public:
  // A new, default-constructed entry for flow `id` (replacing any old one).
  Entry& add(std::uint32_t id) {
    if (by_id_.size() <= id) by_id_.resize(id + 1);
    by_id_[id] = std::make_unique<Entry>();
    return *by_id_[id];
  }
  // nullptr for an id that was never added (or was released).
  Entry* find(std::uint32_t id) const { return id < by_id_.size() ? by_id_[id].get() : nullptr; }
  void release(std::uint32_t id) {
    if (id < by_id_.size()) by_id_[id].reset();
  }

 private:
  std::vector<std::unique_ptr<Entry>> by_id_;
};

}  // namespace safs
