#include "net/port.h"

#include <utility>

namespace safs {

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
  const InFlight launched{arrive_at, &packet, packet.route->hops[packet.next_hop++]};
  if (due_.packet == nullptr) {
    due_ = launched;
    sim_.schedule_at(arrive_at, this, &packet);
  } else {
    behind_.push_back(launched);
  }
}

void Wire::handle_event(EventId /*id*/) {
  const TimePs now = sim_.now();
  while (due_.packet != nullptr && due_.arrive_at_ps <= now) {
    const InFlight arrived = due_;
    due_ = behind_.empty() ? InFlight{} : behind_.pop_front();
    arrived.next->receive(*arrived.packet);
  }
  if (due_.packet != nullptr) sim_.schedule_at(due_.arrive_at_ps, this, due_.packet);
}

Port::Port(Simulator& sim, PacketPool& pool, std::string name, const LinkSpec& link,
           std::unique_ptr<QueueDiscipline> queue)
    : sim_(sim),
      pool_(pool),
      name_(std::move(name)),
      link_(link),
      queue_(std::move(queue)),
      wire_(sim, pool, link.delay_ps) {}

void Port::receive(Packet& packet) {
  note_queue_change();
  if (Packet* dropped = queue_->enqueue(packet)) {
    ++stats_.drops;
    pool_.release(dropped);
  }
  if (queue_->bytes() > stats_.max_queue_bytes) stats_.max_queue_bytes = queue_->bytes();
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
  ++stats_.packets_sent;
  stats_.bytes_sent += packet->wire_bytes;
  stats_.busy_ps += tx_ps;
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
  stats_.queue_byte_ps +=
      static_cast<double>(queue_->bytes()) * static_cast<double>(now - last_queue_change_ps_);
  last_queue_change_ps_ = now;
}

void Port::settle_stats() { note_queue_change(); }

double Port::mean_queue_bytes(TimePs over_ps) const {
  return over_ps > 0 ? stats_.queue_byte_ps / static_cast<double>(over_ps) : 0.0;
}

}  // namespace safs
