#include "net/port.h"

#include <utility>

namespace safs {

// The wire's hot line holds its vtable pointer, simulator, due packet, ring
// and loss generator; a bigger ring or a new field there pushes some of them
// into a second line that every packet then reads (port.h).
static_assert(sizeof(RingQueue<int>) == 24, "a ring is a pointer and three 32-bit counts");
static_assert(sizeof(Wire) == 2 * 64, "the wire's hot line and one cold line");

void Wire::set_loss(double probability, std::uint64_t seed, std::uint64_t stream_index) {
  loss_probability_ = probability;
  loss_rng_ = probability > 0 ? std::make_unique<Rng>(seed, "wire-loss", stream_index) : nullptr;
}

void Wire::launch(Packet& packet, TimePs arrive_at) {
  if (loss_rng_ != nullptr && loss_rng_->bernoulli(loss_probability_)) {
    ++losses_;
    pool_.release(&packet);
    return;
  }
  // Packets on one wire arrive in launch order, so a FIFO with one pending
  // event (for its head) replaces one event per packet in the global heap.
  PacketSink* next = packet.route->hops[packet.next_hop++];
  if (due_.packet == nullptr) {
    due_ = Due{&packet, next};
    sim_.schedule_at(arrive_at, this, &packet);
  } else {
    behind_.push_back(InFlight{arrive_at, &packet, next});
  }
}

void Wire::handle_event(EventId /*id*/) {
  // The due packet arrives now (its event is the wire's only one).
  const TimePs now = sim_.now();
  while (true) {
    const Due arrived = due_;
    if (behind_.empty()) {
      due_ = Due{};
      arrived.next->receive(*arrived.packet);
      return;
    }
    // The next packet's slot was written a propagation delay ago and has
    // mostly left the cache: fetch it while the arrived packet is delivered.
    // Delivery goes on at the next hop and never launches onto this wire
    // (nor would that disturb the front of its queue).
    __builtin_prefetch(&behind_.front());
    arrived.next->receive(*arrived.packet);
    const InFlight next = behind_.pop_front();
    due_ = Due{next.packet, next.next};
    if (next.arrive_at_ps > now) {
      sim_.schedule_at(next.arrive_at_ps, this, next.packet);
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
  stats.packets_sent = counters_.packets_sent;
  stats.bytes_sent = counters_.bytes_sent;
  stats.drops = drops_;
  stats.max_queue_bytes = counters_.max_queue_bytes;
  stats.queue_byte_ps = counters_.queue_byte_ps;
  stats.busy_ps = counters_.busy_ps;
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
  // busy_until_ps_ and waits for it. A host port polls its source each time.
  if (!queue_->empty() || source_ != nullptr) {
    tx_event_pending_ = true;
    sim_.schedule_at(busy_until_ps_, this, queue_->peek());
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
