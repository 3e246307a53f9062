#include "net/port.h"

#include <cassert>
#include <utility>

namespace safs {

// A wire is one cache line (port.h): a field added to it would make every
// packet's hop read two.
static_assert(sizeof(Wire) == 64, "a wire is one cache line");

void Wire::set_loss(double probability, std::uint64_t seed, std::uint64_t stream_index) {
  loss_ = probability > 0
              ? std::make_unique<Loss>(Loss{probability, Rng(seed, "wire-loss", stream_index)})
              : nullptr;
}

void Wire::launch(Packet& packet, TimePs arrive_at) {
  if (loss_ != nullptr && loss_->rng.bernoulli(loss_->probability)) {
    ++losses_;
    pool_.release(&packet);
    return;
  }
  // Packets on one wire arrive in launch order, so a FIFO with one pending
  // event (for its head) replaces one event per packet in the global heap.
  packet.wire_arrive_at_ps = arrive_at;
  packet.next = nullptr;
  if (head_ == nullptr) {
    head_ = &packet;
    sim_.schedule_at(arrive_at, this, &packet);
  } else {
    tail_->next = &packet;
  }
  tail_ = &packet;
}

void Wire::handle_event(EventId /*id*/) {
  // The head arrives now (its event is the wire's only one: no route passes
  // one port twice, so a delivery never launches onto the wire it left).
  assert(head_ != nullptr);
  const TimePs now = sim_.now();
  while (true) {
    Packet& arrived = *head_;
    head_ = arrived.next;
    // The next packet is read below, after the delivery; fetch it now.
    if (head_ != nullptr) __builtin_prefetch(head_);
    arrived.route->hops[arrived.next_hop++]->receive(arrived);
    if (head_ == nullptr) {
      tail_ = nullptr;
      return;
    }
    if (head_->wire_arrive_at_ps > now) {
      sim_.schedule_at(head_->wire_arrive_at_ps, this, head_);
      return;
    }
  }
}

Port::Port(Simulator& sim, PacketPool& pool, std::string name, const LinkSpec& link,
           std::unique_ptr<QueueDiscipline> queue)
    : sim_(sim),
      queue_(std::move(queue)),
      link_(link),
      wire_(sim, pool, link.delay_ps),
      pool_(pool),
      name_(std::move(name)) {}

PortStats Port::stats() const {
  PortStats stats;
  static_cast<PortCounters&>(stats) = counters_;
  stats.drops = drops_;
  return stats;
}

void Port::receive(Packet& packet) {
  note_queue_change();
  if (Packet* dropped = queue_->enqueue(packet)) {
    ++drops_;
    pool_.release(dropped);
  }
  if (queue_->bytes() > counters_.max_queue_bytes) counters_.max_queue_bytes = queue_->bytes();
  wake();
}

void Port::wake() {
  // A source may wake its port from inside pull_packet(); the port polls it
  // again after this packet anyway.
  if (tx_event_pending_ || pulling_) return;
  if (completion_reserved_) {
    completion_reserved_ = false;
    const EventId id = reserved_completion_id_;
    // Still ahead: it runs where the completion would have run. Already
    // passed: it would have found nothing, so the port is free now.
    if (!sim_.ran_before_now(busy_until_ps_, id)) {
      tx_event_pending_ = true;
      sim_.schedule_reserved(busy_until_ps_, id, this, nullptr);
      return;
    }
  }
  if (sim_.now() >= busy_until_ps_) {
    start_next();
  } else {
    tx_event_pending_ = true;
    sim_.schedule_at(busy_until_ps_, this, queue_->peek());
  }
}

void Port::handle_event(EventId /*id*/) {
  tx_event_pending_ = false;
  start_next();
}

void Port::start_next() {
  Packet* packet = nullptr;
  if (!queue_->empty()) {
    note_queue_change();
    packet = queue_->dequeue();
  } else if (source_ != nullptr) {
    pulling_ = true;
    packet = source_->pull_packet();
    pulling_ = false;
  }
  if (packet == nullptr) return;

  const TimePs tx_ps = serialization_ps(packet->wire_bytes, link_.rate_bps);
  busy_until_ps_ = sim_.now() + tx_ps;
  ++counters_.packets_sent;
  counters_.bytes_sent += packet->wire_bytes;
  counters_.busy_ps += tx_ps;
  if (tap_ != nullptr) tap_->on_transmit(*this, *packet, sim_.now());
  wire_.launch(*packet, busy_until_ps_ + link_.delay_ps);
  // An idle switch port needs no completion event: the next arrival sees
  // busy_until_ps_ and waits for it. A host port polls its source after each
  // packet; when the source is idle the poll would find nothing, so the
  // completion only reserves its place in the event order (wake() uses it).
  if (!queue_->empty() || (source_ != nullptr && !source_->idle())) {
    tx_event_pending_ = true;
    sim_.schedule_at(busy_until_ps_, this, queue_->peek());
  } else if (source_ != nullptr) {
    completion_reserved_ = true;
    reserved_completion_id_ = sim_.reserve_id(busy_until_ps_);
  }
}

void Port::note_queue_change() {
  const TimePs now = sim_.now();
  counters_.queue_byte_ps +=
      static_cast<double>(queue_->bytes()) * static_cast<double>(now - last_queue_change_ps_);
  last_queue_change_ps_ = now;
}

void Port::settle_stats() { note_queue_change(); }

double Port::mean_queue_bytes(TimePs over_ps) const {
  return over_ps > 0 ? counters_.queue_byte_ps / static_cast<double>(over_ps) : 0.0;
}

}  // namespace safs
