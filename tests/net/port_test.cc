// Serialisation arithmetic, exact store-and-forward timing through ports and
// wires, host NICs pulling from a PacketSource, drops, and random wire loss.
#include "net/port.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "engine/simulator.h"
#include "net/network.h"
#include "net/packet_pool.h"
#include "net/priority_queue.h"
#include "net/route.h"
#include "net/topology.h"

namespace safs {
namespace {

constexpr std::uint64_t kGbps = 1'000'000'000;

class Callback final : public EventHandler {
 public:
  explicit Callback(std::function<void()> fn) : fn_(std::move(fn)) {}
  void handle_event(EventId /*id*/) override { fn_(); }

 private:
  std::function<void()> fn_;
};

struct Arrival {
  TimePs at;
  std::uint64_t seq;
  std::uint8_t priority;
  std::uint32_t src_host;
};

// The receiving end: records every packet and returns it to the pool.
class RecordingSink final : public PacketSink {
 public:
  RecordingSink(Simulator& sim, PacketPool& pool) : sim_(sim), pool_(pool) {}
  void receive(Packet& packet) override {
    arrivals.push_back({sim_.now(), packet.seq, packet.priority, packet.src_host});
    pool_.release(&packet);
  }
  std::vector<TimePs> times() const {
    std::vector<TimePs> out;
    for (const Arrival& a : arrivals) out.push_back(a.at);
    return out;
  }
  std::vector<std::uint64_t> seqs() const {
    std::vector<std::uint64_t> out;
    for (const Arrival& a : arrivals) out.push_back(a.seq);
    return out;
  }
  std::vector<Arrival> arrivals;

 private:
  Simulator& sim_;
  PacketPool& pool_;
};

Packet& make_packet(PacketPool& pool, const Route& route, std::uint32_t wire_bytes,
                    std::uint64_t seq, std::uint8_t priority = 0, std::uint16_t next_hop = 0) {
  Packet& p = *pool.acquire();
  p.route = &route;
  p.next_hop = next_hop;
  p.wire_bytes = wire_bytes;
  p.payload_bytes = wire_bytes;
  p.seq = seq;
  p.priority = priority;
  return p;
}

// Hands `count` packets to the route's first hop (the source NIC) at time `at`.
struct Injection {
  Injection(PacketPool& pool, const Route& route, std::uint32_t wire_bytes, int count,
            std::uint64_t first_seq, std::uint32_t src = 0)
      : cb([&pool, &route, wire_bytes, count, first_seq, src] {
          for (int i = 0; i < count; ++i) {
            Packet& p = make_packet(pool, route, wire_bytes, first_seq + i);
            p.src_host = src;
            forward(p);
          }
        }) {}
  Callback cb;
};

// A small star network: hosts 0..n-1 on one switch, every link the same.
struct Star {
  Star(int hosts, const LinkSpec& link, NetworkConfig config = {}) {
    TopologySpec spec;
    spec.kind = TopologyKind::kStar;
    spec.hosts = hosts;
    spec.host_link = link;
    net = build_network(spec, sim, pool, std::move(config));
    for (int h = 0; h < hosts; ++h) {
      sinks.push_back(std::make_unique<RecordingSink>(sim, pool));
      net->attach_host(h, sinks.back().get(), nullptr);
    }
  }
  Simulator sim;
  PacketPool pool;
  std::unique_ptr<Network> net;
  std::vector<std::unique_ptr<RecordingSink>> sinks;
};

// ---------------------------------------------------------------------------
// Serialisation arithmetic

TEST(SerializationTest, ExactValues) {
  EXPECT_EQ(serialization_ps(1500, 100 * kGbps), 120'000);  // 120 ns
  EXPECT_EQ(serialization_ps(64, 10 * kGbps), 51'200);      // 51.2 ns
  EXPECT_EQ(serialization_ps(1500, 10 * kGbps), 1'200'000);
  EXPECT_EQ(serialization_ps(1500, 400 * kGbps), 30'000);
  EXPECT_EQ(serialization_ps(9000, 25 * kGbps), 2'880'000);
  EXPECT_EQ(serialization_ps(1, 8), kPsPerSec);  // 8 bits at 8 bps: one second
  EXPECT_EQ(serialization_ps(0, 100 * kGbps), 0);
}

TEST(SerializationTest, RoundsUpWhenRateDoesNotDivide) {
  // 8 bits at 3 Gbps = 2666.67 ps.
  EXPECT_EQ(serialization_ps(1, 3 * kGbps), 2'667);
  // 1500 B at 7 Gbps = 12000e12 / 7e9 = 1714285.71 ps.
  EXPECT_EQ(serialization_ps(1500, 7 * kGbps), 1'714'286);
  // 64 B at 7 bps: 512e12 / 7 = 73142857142857.14 ps.
  EXPECT_EQ(serialization_ps(64, 7), 73'142'857'142'858);
  // Just one bit-picosecond over an exact multiple still rounds up.
  EXPECT_EQ(serialization_ps(1500, 100 * kGbps - 1), 120'001);
}

TEST(SerializationTest, LargeValuesAreExact) {
  // 2^40 bytes at 100 Gbps = 2^40 * 80 ps; the product overflows 64 bits.
  EXPECT_EQ(serialization_ps(std::uint64_t{1} << 40, 100 * kGbps), (TimePs{1} << 40) * 80);
}

TEST(RouteTest, LatencyAndBottleneck) {
  Route route;
  route.rate_bps = {100 * kGbps, 10 * kGbps, 100 * kGbps};
  route.propagation_ps = 3 * kPsPerUs;
  EXPECT_EQ(route.links(), 3u);
  EXPECT_EQ(route.bottleneck_bps(), 10 * kGbps);
  EXPECT_EQ(route.packet_latency_ps(1500), 120'000 + 1'200'000 + 120'000 + 3 * kPsPerUs);
  EXPECT_EQ(Route{}.bottleneck_bps(), 0u);
}

// A route's hops and rates are stored inline: the longest route fits, and one
// more hop is refused by name rather than written past the end.
TEST(RouteTest, InlineListsHoldTheLongestRouteAndRefuseMore) {
  Route route;
  PacketSink* const sink = nullptr;
  for (std::size_t i = 0; i + 1 < kMaxRouteHops; ++i) {
    route.hops.push_back(sink);
    route.rate_bps.push_back(kGbps * (i + 1));
  }
  route.hops.push_back(sink);  // the receiving host
  EXPECT_EQ(route.hops.size(), kMaxRouteHops);
  EXPECT_EQ(route.links(), kMaxRouteHops - 1);
  EXPECT_EQ(route.bottleneck_bps(), kGbps);
  EXPECT_EQ(route.rate_bps.back(), kGbps * (kMaxRouteHops - 1));
  try {
    route.rate_bps.push_back(kGbps);
    FAIL() << "a 16th link was accepted";
  } catch (const std::length_error& e) {
    EXPECT_STREQ(e.what(), "route longer than 16 hops");
  }
  EXPECT_THROW(route.hops.push_back(sink), std::length_error);
}

// ---------------------------------------------------------------------------
// Timing through a network

TEST(PortTimingTest, SinglePacketIsStoreAndForward) {
  Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
  const Route route = star.net->route(0, 1, 1);
  ASSERT_EQ(route.links(), 2u);
  Injection inject(star.pool, route, 1500, 1, 0);
  star.sim.schedule_at(0, &inject.cb);
  star.sim.run();
  // NIC serialise + wire + switch serialise + wire.
  const TimePs expected = 2 * 120'000 + 2 * kPsPerUs;
  EXPECT_EQ(star.sinks[1]->times(), (std::vector<TimePs>{expected}));
  EXPECT_EQ(route.packet_latency_ps(1500), expected);
  EXPECT_TRUE(star.sinks[0]->arrivals.empty());
  EXPECT_EQ(star.pool.live(), 0u);
}

TEST(PortTimingTest, InjectionTimeShiftsArrival) {
  Star star(2, LinkSpec{10 * kGbps, 500 * kPsPerNs});
  const Route route = star.net->route(1, 0, 99);
  Injection inject(star.pool, route, 64, 1, 0, 1);
  star.sim.schedule_at(7 * kPsPerUs + 3, &inject.cb);
  star.sim.run();
  EXPECT_EQ(star.sinks[0]->times(),
            (std::vector<TimePs>{7 * kPsPerUs + 3 + 2 * 51'200 + 2 * 500 * kPsPerNs}));
}

TEST(PortTimingTest, BackToBackPacketsAreOneSerializationApart) {
  Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
  const Route route = star.net->route(0, 1, 1);
  Injection inject(star.pool, route, 1500, 5, 100);
  star.sim.schedule_at(0, &inject.cb);
  star.sim.run();
  std::vector<TimePs> expected;
  for (int i = 0; i < 5; ++i) expected.push_back(2 * 120'000 + 2 * kPsPerUs + i * 120'000);
  EXPECT_EQ(star.sinks[1]->times(), expected);
  EXPECT_EQ(star.sinks[1]->seqs(), (std::vector<std::uint64_t>{100, 101, 102, 103, 104}));
}

// A fast first link into a slow second one: packets queue at the switch and
// leave one slow serialisation apart.
TEST(PortTimingTest, BottleneckSpacingAndQueueing) {
  Simulator sim;
  PacketPool pool;
  Network net(sim, pool, 2, NetworkConfig{});
  const int sw = net.add_switch("sw");
  net.connect(0, sw, LinkSpec{100 * kGbps, kPsPerUs});
  net.connect(1, sw, LinkSpec{10 * kGbps, 500 * kPsPerNs});
  RecordingSink sink(sim, pool);
  net.attach_host(1, &sink, nullptr);
  const Route route = net.route(0, 1, 5);
  ASSERT_EQ(route.links(), 2u);
  EXPECT_EQ(route.rate_bps, (RouteLinkRates{100 * kGbps, 10 * kGbps}));
  EXPECT_EQ(route.propagation_ps, kPsPerUs + 500 * kPsPerNs);

  Injection inject(pool, route, 1500, 3, 0);
  sim.schedule_at(0, &inject.cb);
  sim.run();
  const TimePs first = 120'000 + kPsPerUs + 1'200'000 + 500 * kPsPerNs;
  EXPECT_EQ(sink.times(), (std::vector<TimePs>{first, first + 1'200'000, first + 2'400'000}));

  // The switch port held up to two packets while the first was on the wire.
  auto* switch_port = dynamic_cast<Port*>(route.hops[1]);
  ASSERT_NE(switch_port, nullptr);
  EXPECT_EQ(switch_port->name(), "sw->host1");
  EXPECT_EQ(switch_port->stats().packets_sent, 3u);
  EXPECT_EQ(switch_port->stats().bytes_sent, 4500u);
  EXPECT_EQ(switch_port->stats().busy_ps, 3 * 1'200'000);
  EXPECT_EQ(switch_port->stats().max_queue_bytes, 3000u);
  EXPECT_EQ(switch_port->stats().drops, 0u);
  EXPECT_EQ(switch_port->queue().packets(), 0u);
}

// Two senders into one receiver: the second packet waits for the first.
TEST(PortTimingTest, SimultaneousArrivalWaitsForBusyPort) {
  Star star(3, LinkSpec{100 * kGbps, kPsPerUs});
  const Route r0 = star.net->route(0, 2, 1);
  const Route r1 = star.net->route(1, 2, 2);
  Injection from0(star.pool, r0, 1500, 1, 10, 0);
  Injection from1(star.pool, r1, 1500, 1, 20, 1);
  star.sim.schedule_at(0, &from0.cb);
  star.sim.schedule_at(0, &from1.cb);
  star.sim.run();
  const TimePs at_switch = 120'000 + kPsPerUs;
  const TimePs first = at_switch + 120'000 + kPsPerUs;
  EXPECT_EQ(star.sinks[2]->times(), (std::vector<TimePs>{first, first + 120'000}));
  // Ties are broken by scheduling order: host 0 was injected first.
  EXPECT_EQ(star.sinks[2]->seqs(), (std::vector<std::uint64_t>{10, 20}));
}

// A packet that arrives half-way through another's transmission waits for
// exactly the remaining half.
TEST(PortTimingTest, ArrivalDuringTransmissionWaitsForTheRest) {
  Star star(3, LinkSpec{100 * kGbps, kPsPerUs});
  const Route r0 = star.net->route(0, 2, 1);
  const Route r1 = star.net->route(1, 2, 2);
  Injection from0(star.pool, r0, 1500, 1, 10, 0);
  Injection from1(star.pool, r1, 1500, 1, 20, 1);
  star.sim.schedule_at(0, &from0.cb);
  star.sim.schedule_at(60'000, &from1.cb);
  star.sim.run();
  const TimePs first = 2 * 120'000 + 2 * kPsPerUs;
  // Without contention the second would arrive at 60'000 + first; it waits
  // 60'000 at the switch, so arrives exactly one serialisation after the first.
  EXPECT_EQ(star.sinks[2]->times(), (std::vector<TimePs>{first, first + 120'000}));
}

// A port that has gone idle sends the next arrival at once, not at a stale
// completion time.
TEST(PortTimingTest, IdlePortSendsImmediately) {
  Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
  const Route route = star.net->route(0, 1, 1);
  Injection a(star.pool, route, 1500, 1, 0);
  Injection b(star.pool, route, 1500, 1, 1);
  star.sim.schedule_at(0, &a.cb);
  star.sim.schedule_at(50 * kPsPerUs, &b.cb);
  star.sim.run();
  const TimePs latency = 2 * 120'000 + 2 * kPsPerUs;
  EXPECT_EQ(star.sinks[1]->times(), (std::vector<TimePs>{latency, 50 * kPsPerUs + latency}));
}

// ---------------------------------------------------------------------------
// A port on its own

struct LonePort {
  explicit LonePort(PriorityQueueConfig config, LinkSpec link = {10 * kGbps, 2 * kPsPerUs})
      : port(sim, pool, "lone", link, std::make_unique<StrictPriorityQueue>(config)),
        sink(sim, pool) {
    route.hops = {&port, &sink};
    route.rate_bps = {link.rate_bps};
    route.propagation_ps = link.delay_ps;
  }
  void send(std::uint32_t bytes, std::uint64_t seq, std::uint8_t priority = 0) {
    forward(make_packet(pool, route, bytes, seq, priority));
  }
  Simulator sim;
  PacketPool pool;
  Port port;
  RecordingSink sink;
  Route route;
};

TEST(LonePortTest, TimingAndStrictPriorityOrder) {
  LonePort lone(PriorityQueueConfig{});
  lone.send(64, 0, 0);  // starts at once
  lone.send(64, 1, 0);
  lone.send(64, 2, 7);
  lone.send(64, 3, 3);
  lone.send(64, 4, 7);
  lone.sim.run();
  EXPECT_EQ(lone.sink.seqs(), (std::vector<std::uint64_t>{0, 2, 4, 3, 1}));
  std::vector<TimePs> expected;
  for (int i = 1; i <= 5; ++i) expected.push_back(i * 51'200 + 2 * kPsPerUs);
  EXPECT_EQ(lone.sink.times(), expected);
  EXPECT_EQ(lone.port.stats().packets_sent, 5u);
  EXPECT_EQ(lone.port.stats().busy_ps, 5 * 51'200);
}

TEST(LonePortTest, DropTailWhenBufferFull) {
  PriorityQueueConfig config;
  config.limits.port_bytes = 3000;
  LonePort lone(config);
  for (std::uint64_t seq = 0; seq < 5; ++seq) lone.send(1500, seq);
  // The first is on the wire, two fill the buffer, two are dropped.
  EXPECT_EQ(lone.port.stats().drops, 2u);
  EXPECT_EQ(lone.port.queue().bytes(), 3000u);
  EXPECT_EQ(lone.port.stats().max_queue_bytes, 3000u);
  lone.sim.run();
  EXPECT_EQ(lone.sink.seqs(), (std::vector<std::uint64_t>{0, 1, 2}));
  EXPECT_EQ(lone.pool.live(), 0u);  // dropped packets went back to the pool
}

TEST(LonePortTest, MeanQueueBytesIsTimeIntegral) {
  LonePort lone(PriorityQueueConfig{}, LinkSpec{100 * kGbps, 0});
  lone.send(1500, 0);  // transmits 0..120'000
  lone.send(1500, 1);  // queued 0..120'000
  lone.send(1500, 2);  // queued 0..240'000
  lone.sim.run();
  lone.port.settle_stats();
  const TimePs end = lone.sim.now();
  EXPECT_EQ(end, 360'000);
  // 3000 B for 120 ns, then 1500 B for 120 ns: integral 540'000'000 B*ps.
  EXPECT_DOUBLE_EQ(lone.port.stats().queue_byte_ps, 540'000'000.0);
  EXPECT_DOUBLE_EQ(lone.port.mean_queue_bytes(end), 1500.0);
  EXPECT_DOUBLE_EQ(lone.port.mean_queue_bytes(0), 0.0);
}

// ---------------------------------------------------------------------------
// Host NIC pulling from a PacketSource

class ListSource final : public PacketSource {
 public:
  Packet* pull_packet() override {
    ++pulls;
    if (ready.empty()) return nullptr;
    Packet* p = ready.front();
    ready.pop_front();
    return p;
  }
  std::deque<Packet*> ready;
  int pulls = 0;
};

TEST(PacketSourceTest, NicPullsBackToBackAndWakesLater) {
  Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
  ListSource source;
  star.net->attach_host(0, star.sinks[0].get(), &source);
  const Route route = star.net->route(0, 1, 3);
  // Pulled packets go straight onto the NIC's wire: hop 0 is already done.
  for (std::uint64_t seq = 0; seq < 3; ++seq) {
    source.ready.push_back(&make_packet(star.pool, route, 1500, seq, 0, 1));
  }
  Callback start([&] { star.net->nic(0).wake(); });
  Callback later([&] {
    source.ready.push_back(&make_packet(star.pool, route, 1500, 10, 0, 1));
    source.ready.push_back(&make_packet(star.pool, route, 1500, 11, 0, 1));
    star.net->nic(0).wake();
    star.net->nic(0).wake();  // a second wake while busy changes nothing
  });
  star.sim.schedule_at(0, &start);
  star.sim.schedule_at(20 * kPsPerUs, &later);
  star.sim.run();

  const TimePs latency = 2 * 120'000 + 2 * kPsPerUs;
  EXPECT_EQ(star.sinks[1]->times(),
            (std::vector<TimePs>{latency, latency + 120'000, latency + 240'000,
                                 20 * kPsPerUs + latency, 20 * kPsPerUs + latency + 120'000}));
  EXPECT_EQ(star.sinks[1]->seqs(), (std::vector<std::uint64_t>{0, 1, 2, 10, 11}));
  // One pull per packet plus one empty pull after each burst.
  EXPECT_EQ(source.pulls, 7);
  EXPECT_EQ(star.pool.live(), 0u);
}

TEST(PacketSourceTest, QueuedPacketsGoBeforeSourcePackets) {
  Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
  ListSource source;
  star.net->attach_host(0, star.sinks[0].get(), &source);
  const Route route = star.net->route(0, 1, 3);
  source.ready.push_back(&make_packet(star.pool, route, 1500, 100, 0, 1));
  Injection inject(star.pool, route, 1500, 2, 0);  // via forward(): queued
  star.sim.schedule_at(0, &inject.cb);
  star.sim.run();
  EXPECT_EQ(star.sinks[1]->seqs(), (std::vector<std::uint64_t>{0, 1, 100}));
}

// A source that says when it is idle lets its NIC reserve, not schedule,
// the completion after its last packet. Three wakes around that completion's
// time: during the packet (1), at its end from an event scheduled before the
// reservation (2), and at its end from one scheduled after it (3). Each
// packet goes where it went with a completion event per packet, in the same
// order relative to the other events, with fewer events run.
class LoggingSource final : public PacketSource {
 public:
  LoggingSource(Simulator& sim, bool reports_idle, std::vector<std::string>& log)
      : sim_(sim), reports_idle_(reports_idle), log_(log) {}
  Packet* pull_packet() override {
    if (ready.empty()) return nullptr;
    Packet* p = ready.front();
    ready.pop_front();
    log_.push_back("pull " + std::to_string(p->seq) + "@" + std::to_string(sim_.now()));
    return p;
  }
  bool idle() const override { return reports_idle_ && ready.empty(); }
  std::deque<Packet*> ready;

 private:
  Simulator& sim_;
  bool reports_idle_;
  std::vector<std::string>& log_;
};

struct IdleSourceRun {
  std::vector<std::string> log;
  std::vector<TimePs> arrivals;
  std::uint64_t events = 0;
};

IdleSourceRun run_idle_source(bool reports_idle) {
  Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
  IdleSourceRun out;
  LoggingSource source(star.sim, reports_idle, out.log);
  star.net->attach_host(0, star.sinks[0].get(), &source);
  const Route route = star.net->route(0, 1, 3);
  constexpr TimePs kTx = 120'000;  // 1500 B at 100 Gbit/s
  Port& nic = star.net->nic(0);
  std::uint64_t next_seq = 0;
  const auto send = [&](const char* who) {
    out.log.push_back(std::string(who) + "@" + std::to_string(star.sim.now()));
    source.ready.push_back(&make_packet(star.pool, route, 1500, next_seq++, 0, 1));
    nic.wake();
    out.log.push_back(std::string(who) + " done");
  };
  // (1) during packet 0; (2) at the end of packet 1, scheduled before it
  // was sent; (3) at the end of packet 2, scheduled after it was sent.
  Callback during([&] { send("during"); });
  Callback at_end_before([&] { send("at end, before"); });
  Callback at_end_after([&] { send("at end, after"); });
  Callback schedule_after([&] { star.sim.schedule_at(3 * kTx, &at_end_after); });
  // At the end of packet 0, scheduled after it was sent: it runs after the
  // completion that (1) claims.
  Callback observer([&] { out.log.push_back("observer@" + std::to_string(star.sim.now())); });
  Callback start([&] {
    star.sim.schedule_at(2 * kTx, &at_end_before);
    send("start");
    star.sim.schedule_at(kTx, &observer);
    star.sim.schedule_at(kTx / 2, &during);
    star.sim.schedule_at(2 * kTx + 1, &schedule_after);
  });
  star.sim.schedule_at(0, &start);
  star.sim.run();
  out.arrivals = star.sinks[1]->times();
  out.events = star.sim.events_processed();
  EXPECT_EQ(star.pool.live(), 0u);
  return out;
}

TEST(PacketSourceTest, AnIdleSourceCostsNoCompletionEventAndChangesNoOrder) {
  const IdleSourceRun polled = run_idle_source(false);
  const IdleSourceRun reserved = run_idle_source(true);
  constexpr TimePs kTx = 120'000;
  EXPECT_EQ(polled.log,
            (std::vector<std::string>{
                "start@0", "pull 0@0", "start done", "during@60000", "during done", "pull 1@120000",
                "observer@120000", "at end, before@240000", "at end, before done", "pull 2@240000",
                "at end, after@360000", "pull 3@360000", "at end, after done"}));
  EXPECT_EQ(reserved.log, polled.log);
  EXPECT_EQ(reserved.arrivals, polled.arrivals);
  const TimePs latency = 2 * kTx + 2 * kPsPerUs;
  EXPECT_EQ(polled.arrivals,
            (std::vector<TimePs>{latency, latency + kTx, latency + 2 * kTx, latency + 3 * kTx}));
  // The completions that found nothing did not run: after packet 2 (packet 3
  // came from an event after its end) and after packet 3.
  EXPECT_EQ(polled.events - reserved.events, 2u);
}

// The same between runs: a run that stops exactly at a packet's end has, as
// far as anything can tell, run the completion there (which found nothing),
// so a wake after it sends at once. Here that decides which of two packets
// goes first from a source that sends its lowest sequence number first.
// Samplers, and the time a run ends at, see the reserved completions too.
class LowestFirstSource final : public PacketSource {
 public:
  explicit LowestFirstSource(bool reports_idle) : reports_idle_(reports_idle) {}
  Packet* pull_packet() override {
    if (ready.empty()) return nullptr;
    auto lowest =
        std::min_element(ready.begin(), ready.end(),
                         [](const Packet* a, const Packet* b) { return a->seq < b->seq; });
    Packet* p = *lowest;
    ready.erase(lowest);
    return p;
  }
  bool idle() const override { return reports_idle_ && ready.empty(); }
  std::vector<Packet*> ready;

 private:
  bool reports_idle_;
};

struct ResumedRun {
  std::vector<std::uint64_t> seqs;
  std::vector<std::pair<TimePs, std::uint64_t>> samples;  // tick, NIC packets sent
  TimePs second_stop_now = 0;
  TimePs end_now = 0;
};

ResumedRun run_resumed(bool reports_idle) {
  Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
  LowestFirstSource source(reports_idle);
  star.net->attach_host(0, star.sinks[0].get(), &source);
  const Route route = star.net->route(0, 1, 3);
  constexpr TimePs kTx = 120'000;
  ResumedRun out;
  Port& nic = star.net->nic(0);
  star.sim.set_sampler(
      50'000, [&out, &nic](TimePs at) { out.samples.emplace_back(at, nic.stats().packets_sent); });
  source.ready.push_back(&make_packet(star.pool, route, 1500, 10, 0, 1));
  nic.wake();               // before the run: packet 10 goes at 0
  star.sim.run_until(kTx);  // stops exactly at its end
  source.ready.push_back(&make_packet(star.pool, route, 1500, 20, 0, 1));
  nic.wake();  // the NIC is free: 20 goes now
  source.ready.push_back(&make_packet(star.pool, route, 1500, 5, 0, 1));
  nic.wake();  // 5 waits for the end of 20
  // 5 ends at 3 kTx, where its completion finds nothing: the only event
  // after 2 kTx up to the stop (the packets reach the switch from 1.12 us),
  // so it alone gets ticks 250 to 350 ns sampled.
  star.sim.run_until(400'000);
  out.second_stop_now = star.sim.now();
  // A fourth packet between runs: a tick sampled only in the next run would
  // count it.
  source.ready.push_back(&make_packet(star.pool, route, 1500, 30, 0, 1));
  nic.wake();
  star.sim.run();
  out.end_now = star.sim.now();
  out.seqs = star.sinks[1]->seqs();
  EXPECT_EQ(star.pool.live(), 0u);
  return out;
}

TEST(PacketSourceTest, AnIdleSourceChangesNothingBetweenRunsOrForSamplers) {
  const ResumedRun polled = run_resumed(false);
  const ResumedRun reserved = run_resumed(true);
  EXPECT_EQ(polled.seqs, (std::vector<std::uint64_t>{10, 20, 5, 30}));
  EXPECT_EQ(reserved.seqs, polled.seqs);
  using Sample = std::pair<TimePs, std::uint64_t>;
  ASSERT_GE(polled.samples.size(), 7u);
  EXPECT_EQ(std::vector<Sample>(polled.samples.begin(), polled.samples.begin() + 7),
            (std::vector<Sample>{{50'000, 1},
                                 {100'000, 1},
                                 {150'000, 2},
                                 {200'000, 2},
                                 {250'000, 3},
                                 {300'000, 3},
                                 {350'000, 3}}));
  EXPECT_EQ(reserved.samples, polled.samples);
  EXPECT_EQ(polled.second_stop_now, 400'000);
  EXPECT_EQ(reserved.second_stop_now, polled.second_stop_now);
  EXPECT_EQ(reserved.end_now, polled.end_now);
}

TEST(PacketSourceTest, ARunEndsWhereTheLastReservedCompletionWouldHave) {
  // The NIC's only packet is lost on its wire, so the completion after it
  // (nothing to send) is the run's last event, or its last reservation.
  const auto end_of_run = [](bool reports_idle) {
    Star star(2, LinkSpec{100 * kGbps, kPsPerUs});
    LowestFirstSource source(reports_idle);
    star.net->attach_host(0, star.sinks[0].get(), &source);
    star.net->nic(0).wire().set_loss(1.0, 1, 0);
    const Route route = star.net->route(0, 1, 3);
    source.ready.push_back(&make_packet(star.pool, route, 1500, 1, 0, 1));
    star.net->nic(0).wake();
    star.sim.run();
    return star.sim.now();
  };
  EXPECT_EQ(end_of_run(false), 120'000);
  EXPECT_EQ(end_of_run(true), 120'000);
}

// ---------------------------------------------------------------------------
// Random loss on the wire

struct LossResult {
  std::uint64_t losses = 0;
  std::vector<std::uint64_t> received;
};

LossResult run_lossy_wire(double p, std::uint64_t seed, std::uint64_t index, int packets) {
  Simulator sim;
  PacketPool pool;
  RecordingSink sink(sim, pool);
  Route route;
  route.hops = {&sink};
  Wire wire(sim, pool, kPsPerUs);
  wire.set_loss(p, seed, index);
  for (int i = 0; i < packets; ++i) {
    Packet& packet = make_packet(pool, route, 1500, static_cast<std::uint64_t>(i));
    wire.launch(packet, kPsPerUs + i * 1000);
  }
  sim.run();
  EXPECT_EQ(pool.live(), 0u);
  EXPECT_EQ(wire.losses() + sink.arrivals.size(), static_cast<std::uint64_t>(packets));
  // Survivors arrive in launch order at their launch-time arrival.
  for (const Arrival& a : sink.arrivals) {
    EXPECT_EQ(a.at, kPsPerUs + static_cast<TimePs>(a.seq) * 1000);
  }
  return {wire.losses(), sink.seqs()};
}

TEST(WireLossTest, NoLossByDefault) {
  Simulator sim;
  PacketPool pool;
  RecordingSink sink(sim, pool);
  Route route;
  route.hops = {&sink};
  Wire wire(sim, pool, 5000);
  for (int i = 0; i < 100; ++i) wire.launch(make_packet(pool, route, 100, i), 5000 + i);
  sim.run();
  EXPECT_EQ(sink.arrivals.size(), 100u);
  EXPECT_EQ(wire.losses(), 0u);
  EXPECT_EQ(wire.delay_ps(), 5000);
}

TEST(WireLossTest, HalfLostAndDeterministic) {
  const LossResult a = run_lossy_wire(0.5, 1234, 7, 10000);
  // sd = 50 packets; allow 4 sd.
  EXPECT_GE(a.losses, 4800u);
  EXPECT_LE(a.losses, 5200u);
  // Same seed and stream: the very same packets are lost.
  const LossResult again = run_lossy_wire(0.5, 1234, 7, 10000);
  EXPECT_EQ(again.losses, a.losses);
  EXPECT_EQ(again.received, a.received);
  // Another seed or another link index: a different loss pattern.
  EXPECT_NE(run_lossy_wire(0.5, 1235, 7, 10000).received, a.received);
  EXPECT_NE(run_lossy_wire(0.5, 1234, 8, 10000).received, a.received);
}

TEST(WireLossTest, SmallLossRate) {
  const LossResult r = run_lossy_wire(0.01, 99, 0, 10000);
  EXPECT_GE(r.losses, 60u);  // mean 100, sd ~10
  EXPECT_LE(r.losses, 140u);
  EXPECT_EQ(run_lossy_wire(0.0, 99, 0, 1000).losses, 0u);
  EXPECT_EQ(run_lossy_wire(1.0, 99, 0, 1000).losses, 1000u);
}

// The network's link_loss_rate puts a seeded loss stream on every link.
TEST(WireLossTest, NetworkLossIsPerLinkAndSeeded) {
  auto run = [](std::uint64_t seed) {
    NetworkConfig config;
    config.link_loss_rate = 0.5;
    config.seed = seed;
    Star star(2, LinkSpec{100 * kGbps, kPsPerUs}, config);
    const Route route = star.net->route(0, 1, 1);
    Injection inject(star.pool, route, 1500, 4000, 0);
    star.sim.schedule_at(0, &inject.cb);
    star.sim.run();
    std::uint64_t losses = 0;
    for (const auto& port : star.net->ports()) losses += port->wire().losses();
    EXPECT_EQ(losses + star.sinks[1]->arrivals.size(), 4000u);
    EXPECT_EQ(star.pool.live(), 0u);
    return star.sinks[1]->seqs();
  };
  const std::vector<std::uint64_t> a = run(5);
  // Two lossy links: about a quarter survive (mean 1000, sd ~27).
  EXPECT_GE(a.size(), 880u);
  EXPECT_LE(a.size(), 1120u);
  EXPECT_EQ(run(5), a);
  EXPECT_NE(run(6), a);
}

// Each link has its own loss stream: two identical flows on disjoint paths
// lose different packets.
TEST(WireLossTest, LinksLoseIndependently) {
  NetworkConfig config;
  config.link_loss_rate = 0.3;
  config.seed = 11;
  Star star(4, LinkSpec{100 * kGbps, kPsPerUs}, config);
  const Route r02 = star.net->route(0, 2, 1);
  const Route r13 = star.net->route(1, 3, 1);
  Injection a(star.pool, r02, 1500, 1000, 0, 0);
  Injection b(star.pool, r13, 1500, 1000, 0, 1);
  star.sim.schedule_at(0, &a.cb);
  star.sim.schedule_at(0, &b.cb);
  star.sim.run();
  const std::vector<std::uint64_t> got2 = star.sinks[2]->seqs();
  const std::vector<std::uint64_t> got3 = star.sinks[3]->seqs();
  // About 0.49 survive each two-link path (sd ~16).
  EXPECT_GE(got2.size(), 420u);
  EXPECT_LE(got2.size(), 560u);
  EXPECT_GE(got3.size(), 420u);
  EXPECT_LE(got3.size(), 560u);
  EXPECT_NE(got2, got3);
}

}  // namespace
}  // namespace safs
