// One side's per-flow state of a transport (its senders' or its receivers'),
// found by flow id. Each entry is allocated on its own, so its address never
// changes (packets point at the routes inside it, timers at the entry) and
// one side can release its entry when it is done without touching the other.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "base/flow.h"
#include "net/network.h"
#include "transport/common/retiring_flows.h"
#include "transport/common/spare_blocks.h"
#include "transport/transport.h"

namespace safs {

template <typename Entry>
class FlowTable {
 public:
  // A new, default-constructed entry for flow `id` (replacing any old one).
  Entry& add(std::uint32_t id) {
    if (by_id_.size() <= id) by_id_.resize(id + 1);
    if (by_id_[id] == nullptr) ++live_;
    by_id_[id] = take_spare();
    return *by_id_[id];
  }
  // nullptr for an id that was never added (or was released).
  Entry* find(std::uint32_t id) const { return id < by_id_.size() ? by_id_[id].get() : nullptr; }
  void release(std::uint32_t id) {
    if (id >= by_id_.size() || by_id_[id] == nullptr) return;
    std::destroy_at(by_id_[id].get());  // the entry ends here; its memory waits for the next add
    spare_.give_back(by_id_[id].release());
    --live_;
  }
  FlowTable() = default;
  FlowTable(const FlowTable&) = delete;
  FlowTable& operator=(const FlowTable&) = delete;
  // Entries added and not released.
  std::size_t live() const { return live_; }
  // Frees the memory kept from released entries.
  void free_spares() { spare_.free_spares(); }

 private:
  // A new entry, built in the memory of a released one when there is one:
  // entries are a few hundred bytes each and come and go once per flow.
  std::unique_ptr<Entry> take_spare() {
    static_assert(alignof(Entry) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__,
                  "spare blocks have the plain operator new's alignment");
    void* memory = spare_.take();
    try {
      return std::unique_ptr<Entry>(std::construct_at(static_cast<Entry*>(memory)));
    } catch (...) {
      spare_.give_back(memory);  // does not throw
      throw;
    }
  }

  // One pointer per id ever added: 8 bytes a flow, the entry itself only while it lives.
  std::vector<std::unique_ptr<Entry>> by_id_;
  // Memory of released entries (destroyed), at most the peak of live ones.
  // (A live entry's block came from the plain operator new too, so the
  // unique_ptr may delete it.)
  SpareBlocks spare_{sizeof(Entry)};
  std::size_t live_ = 0;
};

// Both sides' entries of a new flow.
template <typename Sender, typename Receiver>
struct FlowSides {
  Sender& sender;
  Receiver& receiver;
};

// Adds a flow's sender entry, with its spec and `data_route` (sender to
// receiver), and its receiver entry, with its spec and `reverse_route`.
template <typename Sender, typename Receiver>
FlowSides<Sender, Receiver> add_flow(Network& net, const FlowSpec& spec, FlowTable<Sender>& senders,
                                     FlowTable<Receiver>& receivers) {
  Sender& sender = senders.add(spec.id);
  sender.spec = spec;
  sender.data_route = net.route(spec.src, spec.dst, spec.id);
  Receiver& receiver = receivers.add(spec.id);
  receiver.spec = spec;
  receiver.reverse_route = net.route(spec.dst, spec.src, spec.id);
  return {sender, receiver};
}

// Bytes the receiver entry of flow `id` has delivered (`received`, a
// SegmentTracker); 0 for a flow it does not know.
template <typename Receiver>
std::uint64_t delivered_bytes_of(const FlowTable<Receiver>& receivers, std::uint32_t id) {
  const Receiver* receiver = receivers.find(id);
  return receiver != nullptr ? receiver->received.delivered_bytes() : 0;
}

// Frees both entries of flow `id` and tells the run what `transport` knew of
// the flow, which it cannot say once they are gone.
template <typename Sender, typename Receiver>
void release_flow(const Transport& transport, FlowObserver& observer, std::uint32_t id,
                  FlowTable<Sender>& senders, FlowTable<Receiver>& receivers) {
  const FlowFinal final{transport.delivered_bytes(id), transport.flow_counters(id)};
  senders.release(id);
  receivers.release(id);
  observer.on_flow_released(id, final);
}

// Called after each event of flow `id` that may end one of its sides: once
// `done(sender, receiver)`, the flow waits in `retiring` (once: the sender
// entry's `retiring` flag) until `unreachable(id)`, and is then freed.
template <typename Sender, typename Receiver, typename Done, typename Unreachable>
void retire_when_done(std::uint32_t id, FlowTable<Sender>& senders, FlowTable<Receiver>& receivers,
                      RetiringFlows& retiring, Done done, Unreachable unreachable,
                      const Transport& transport, FlowObserver& observer) {
  Sender* sender = senders.find(id);
  const Receiver* receiver = receivers.find(id);
  if (sender == nullptr || receiver == nullptr || sender->retiring) return;
  if (!done(*sender, *receiver)) return;
  sender->retiring = true;
  retiring.add(id, unreachable, [&](std::uint32_t freed) {
    release_flow(transport, observer, freed, senders, receivers);
  });
}

}  // namespace safs
