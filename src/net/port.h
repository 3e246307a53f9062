// An egress port: a queue discipline, a transmitter that serialises one
// packet at a time at the link rate, and the wire that carries it to the next
// hop after the propagation delay.
//
// A port may have a PacketSource (a host's transport): when the port has
// nothing queued it pulls the next packet from the source at the moment it
// can send it. That is how hosts pace flows and order them by priority or
// SRPT without a standing host queue (the Homa module's pacer works alike).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "engine/rng.h"
#include "engine/simulator.h"
#include "net/packet_pool.h"
#include "net/packet_tap.h"
#include "net/queue_discipline.h"
#include "net/route.h"

namespace safs {

struct LinkSpec {
  std::uint64_t rate_bps = 100'000'000'000;  // 100 Gbps
  TimePs delay_ps = kPsPerUs;                // 1 µs propagation
};

class PacketSource {
 public:
  virtual ~PacketSource() = default;
  // Called when the port is idle and its queue is empty. Returns a packet to
  // send now, or nullptr (then call Port::wake() when there is one).
  virtual Packet* pull_packet() = 0;
  // True when pull_packet() would return nullptr and change nothing, and
  // will until the source calls Port::wake(). The port then reserves its
  // completion event instead of scheduling it: an idle host port costs no
  // event per packet it sends. (false, the default, is always correct.)
  virtual bool idle() const { return false; }
};

// What a port counts on every packet it sends or queues.
struct PortCounters {
  std::uint64_t packets_sent = 0;
  std::uint64_t bytes_sent = 0;  // wire bytes
  TimePs busy_ps = 0;            // time spent serialising
  std::uint64_t max_queue_bytes = 0;
  // Time integral of the queue length, for the time-average queue.
  double queue_byte_ps = 0;
};

struct PortStats : PortCounters {
  std::uint64_t drops = 0;  // refused by the queue
};

// Carries packets across one link: FIFO, one pending event at a time.
//
// A wire's event is where a simulation of a large network spends its time
// waiting on memory: the packet, its route and the next hop's sink have
// mostly left the cache since they were last touched. So the wire keeps no
// storage of its own per packet: the packets in flight are a list through
// their own `next` links (free while a packet is on a wire), each carrying
// its arrival time in its first cache line, the one every hop reads
// anyway. The event reads one line of the wire and the due packet (fetched
// ahead as the event's hint), then the route for the next sink; the next
// port reads the same route line again when it sends the packet on.
class alignas(64) Wire final : public EventHandler {
 public:
  Wire(Simulator& sim, PacketPool& pool, TimePs delay_ps)
      : sim_(sim), pool_(pool), delay_ps_(delay_ps) {}

  void set_loss(double probability, std::uint64_t seed, std::uint64_t stream_index);
  void launch(Packet& packet, TimePs arrive_at);
  void handle_event(EventId id) override;

  TimePs delay_ps() const { return delay_ps_; }
  std::uint64_t losses() const { return losses_; }

 private:
  struct Loss {
    double probability;
    Rng rng;
  };

  // One cache line: what launch and the event read first, then what only a
  // lost packet or a report needs.
  Simulator& sim_;
  Packet* head_ = nullptr;      // the oldest packet on the wire; null: empty
  Packet* tail_ = nullptr;      // the newest
  std::unique_ptr<Loss> loss_;  // null: lossless
  PacketPool& pool_;
  TimePs delay_ps_;
  std::uint64_t losses_ = 0;
};

class Port final : public PacketSink, public EventHandler {
 public:
  Port(Simulator& sim, PacketPool& pool, std::string name, const LinkSpec& link,
       std::unique_ptr<QueueDiscipline> queue);

  void receive(Packet& packet) override;   // enqueue for transmission
  void handle_event(EventId id) override;  // transmission finished

  void set_source(PacketSource* source) { source_ = source; }
  // Told of every packet this port transmits (null: none).
  void set_tap(PacketTap* tap) { tap_ = tap; }
  // The source has a packet ready: pull it now if the port is idle.
  void wake();

  const std::string& name() const { return name_; }
  const LinkSpec& link() const { return link_; }
  Wire& wire() { return wire_; }
  const QueueDiscipline& queue() const { return *queue_; }
  PortStats stats() const;
  std::uint64_t ecn_marks() const { return queue_->ecn_marks(); }
  double mean_queue_bytes(TimePs over_ps) const;
  // Folds the current queue length into the time integral up to now.
  void settle_stats();

 private:
  void start_next();
  void note_queue_change();

  // What a packet's arrival and transmission touch fills the port's first
  // two cache lines (after the two vtable pointers), the wire the third;
  // what only a drop, a report or a name needs comes last. Each packet hop
  // then reads three lines of its port instead of six (bench/README.md,
  // "Hot fields first").
  Simulator& sim_;
  std::unique_ptr<QueueDiscipline> queue_;
  PacketSource* source_ = nullptr;
  PacketTap* tap_ = nullptr;
  TimePs busy_until_ps_ = 0;  // the wire is free from this time on
  LinkSpec link_;
  TimePs last_queue_change_ps_ = 0;
  bool tx_event_pending_ = false;     // a completion event is queued
  bool pulling_ = false;              // inside source_->pull_packet()
  bool completion_reserved_ = false;  // reserved_completion_id_ holds one
  PortCounters counters_;             // apart from drops_, which no packet hop needs
  Wire wire_;
  // The place of a completion that would have found nothing to send (its
  // source idle): wake() schedules it there if that is still ahead. After
  // the wire, where only a host port's transmissions touch it.
  EventId reserved_completion_id_ = 0;
  std::uint64_t drops_ = 0;  // refused by the queue
  PacketPool& pool_;
  std::string name_;
};

}  // namespace safs
