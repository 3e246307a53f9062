// pFabric: the switch queue discipline against its rules and a brute-force
// model, and the end-host transport on the behaviours the paper claims.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/rng.h"
#include "net/packet_pool.h"
#include "support/experiments.h"
#include "support/queues.h"
#include "transport/pfabric/pfabric_header.h"
#include "transport/pfabric/pfabric_queue.h"
#include "transport/pfabric/pfabric_transport.h"

namespace safs {
namespace {

using testing::add_flow;

TEST(PFabricHeader, SelectiveAckListsExactlyTheMarkedSegmentsApartFromTheProbeFlag) {
  Packet ack;
  const std::vector<std::uint64_t> marked = {0, 5, 63, 64, 130, pfabric_header::kSackSegments - 1};
  for (const std::uint64_t bit : marked) pfabric_header::set_sack(ack, bit);
  EXPECT_FALSE(pfabric_header::answers_probe(ack));
  pfabric_header::set_answers_probe(ack, true);
  EXPECT_TRUE(pfabric_header::answers_probe(ack));
  std::vector<std::uint64_t> seen;
  pfabric_header::for_each_sack(ack, [&](std::uint64_t bit) { seen.push_back(bit); });
  EXPECT_EQ(seen, marked);
}

// ---------------------------------------------------------------------------
// PFabricQueue

class PFabricQueueTest : public ::testing::Test {
 protected:
  // `seq` names the packet in the assertions.
  Packet& packet(std::uint32_t flow, std::uint64_t rank, std::uint64_t seq,
                 std::uint32_t wire_bytes = 100, std::uint32_t src = 0) {
    Packet& p = *pool_.acquire();
    p.flow_id = flow;
    p.src_host = src;
    p.rank = rank;
    p.seq = seq;
    p.wire_bytes = wire_bytes;
    return p;
  }
  static PFabricQueue queue(std::uint64_t port_bytes) {
    BufferLimits limits;
    limits.port_bytes = port_bytes;
    return PFabricQueue(limits);
  }
  void admit(PFabricQueue& q, Packet& p) { ASSERT_EQ(q.enqueue(p), nullptr) << "seq " << p.seq; }
  std::vector<std::uint64_t> drain(PFabricQueue& q) { return testing::drain_seqs(q, pool_); }

  PacketPool pool_;
};

TEST_F(PFabricQueueTest, ServesSmallestRankFirstAcrossFlows) {
  PFabricQueue q(BufferLimits{});
  admit(q, packet(1, 300, 1));
  admit(q, packet(2, 100, 2));
  admit(q, packet(3, 200, 3));
  admit(q, packet(4, 100, 4));  // ties with flow 2: the earlier arrival goes first
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{2, 4, 3, 1}));
}

TEST_F(PFabricQueueTest, SendsTheEarliestPacketOfTheMostUrgentFlow) {
  PFabricQueue q(BufferLimits{});
  admit(q, packet(1, 900, 10));  // flow 1's oldest packet, large rank
  admit(q, packet(2, 500, 20));
  admit(q, packet(1, 400, 11));  // flow 1 is now the most urgent...
  admit(q, packet(1, 450, 12));
  // ...so its packets leave in arrival order, all before flow 2.
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{10, 11, 12, 20}));
}

TEST_F(PFabricQueueTest, SameFlowIdFromAnotherHostIsAnotherFlow) {
  PFabricQueue q(BufferLimits{});
  admit(q, packet(7, 900, 1, 100, /*src=*/3));
  admit(q, packet(7, 10, 2, 100, /*src=*/4));
  EXPECT_EQ(q.flows(), 2u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{2, 1}));
}

TEST_F(PFabricQueueTest, FullBufferDropsTheArrivalWhenItsRankIsTheLargest) {
  PFabricQueue q = queue(300);
  admit(q, packet(1, 10, 1));
  admit(q, packet(2, 20, 2));
  admit(q, packet(3, 30, 3));
  Packet& larger = packet(4, 40, 4);
  EXPECT_EQ(q.enqueue(larger), &larger);
  Packet& tie = packet(5, 30, 5);
  EXPECT_EQ(q.enqueue(tie), &tie) << "a tie with the largest drops the arrival";
  pool_.release(&larger);
  pool_.release(&tie);
  EXPECT_EQ(q.bytes(), 300u);
  EXPECT_EQ(q.packets(), 3u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{1, 2, 3}));
}

TEST_F(PFabricQueueTest, FullBufferEvictsTheLargestRankForASmallerArrival) {
  PFabricQueue q = queue(300);
  admit(q, packet(1, 10, 1));
  admit(q, packet(2, 30, 2));
  admit(q, packet(3, 20, 3));
  Packet* evicted = q.enqueue(packet(4, 5, 4));
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->seq, 2u);
  pool_.release(evicted);
  EXPECT_EQ(q.bytes(), 300u);
  EXPECT_EQ(q.packets(), 3u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{4, 1, 3}));
}

TEST_F(PFabricQueueTest, AmongEqualLargestRanksTheNewestIsEvicted) {
  PFabricQueue q = queue(300);
  admit(q, packet(1, 50, 1));
  admit(q, packet(2, 50, 2));
  admit(q, packet(3, 10, 3));
  Packet* evicted = q.enqueue(packet(4, 20, 4));
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->seq, 2u);
  pool_.release(evicted);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{3, 4, 1}));
}

TEST_F(PFabricQueueTest, ShortLargestRankPacketIsSkippedWhenEvictingItCannotMakeRoom) {
  PFabricQueue q = queue(1000);
  admit(q, packet(1, 10, 1, 500));
  admit(q, packet(2, 20, 2, 400));
  admit(q, packet(3, 30, 3, 100));  // the largest rank, but only 100 B
  Packet* evicted = q.enqueue(packet(4, 5, 4, 300));
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->seq, 2u) << "the largest rank whose eviction frees 300 B";
  pool_.release(evicted);
  EXPECT_EQ(q.bytes(), 900u);
  EXPECT_LE(q.bytes(), 1000u);
  // 600 B must go: only seq 1 (500 B) is large enough. An arrival of rank 15
  // outranks it and is dropped; one of rank 7 evicts it.
  Packet& lower = packet(5, 15, 5, 600);
  EXPECT_EQ(q.enqueue(lower), &lower);
  pool_.release(&lower);
  evicted = q.enqueue(packet(6, 7, 6, 600));
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->seq, 1u);
  pool_.release(evicted);
  EXPECT_EQ(q.bytes(), 1000u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{4, 6, 3}));
}

TEST_F(PFabricQueueTest, ByteAccountingAndTheSharedPool) {
  SharedBuffer shared;
  shared.capacity_bytes = 250;
  BufferLimits limits;
  limits.port_bytes = 1000;
  limits.shared = &shared;
  PFabricQueue q(limits);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.dequeue(), nullptr);
  admit(q, packet(1, 30, 1, 100));
  admit(q, packet(2, 20, 2, 150));
  EXPECT_EQ(q.bytes(), 250u);
  EXPECT_EQ(q.packets(), 2u);
  EXPECT_EQ(shared.used_bytes, 250u);
  // The pool is full though the port is not: a smaller rank evicts rank 30.
  Packet* evicted = q.enqueue(packet(3, 10, 3, 100));
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->seq, 1u);
  pool_.release(evicted);
  EXPECT_EQ(shared.used_bytes, 250u);
  EXPECT_EQ(q.bytes(), 250u);
  Packet* first = q.dequeue();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(first->seq, 3u);
  pool_.release(first);
  EXPECT_EQ(q.bytes(), 150u);
  EXPECT_EQ(q.packets(), 1u);
  EXPECT_EQ(shared.used_bytes, 150u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{2}));
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(shared.used_bytes, 0u);
  EXPECT_EQ(q.flows(), 0u);
}

// The rules written the obvious way: an arrival-ordered list scanned per call.
class ReferenceQueue {
 public:
  explicit ReferenceQueue(std::uint64_t limit) : limit_(limit) {}
  Packet* enqueue(Packet& p) {
    const std::uint64_t need = bytes_ + p.wire_bytes > limit_ ? bytes_ + p.wire_bytes - limit_ : 0;
    if (need == 0) return push(p);
    std::size_t best = q_.size();
    for (std::size_t i = 0; i < q_.size(); ++i) {
      if (q_[i]->wire_bytes < need) continue;
      if (best == q_.size() || q_[i]->rank >= q_[best]->rank) best = i;  // newest among ties
    }
    if (best == q_.size() || p.rank >= q_[best]->rank) return &p;
    Packet* victim = erase(best);
    push(p);
    return victim;
  }
  Packet* dequeue() {
    if (q_.empty()) return nullptr;
    std::size_t best = 0;
    for (std::size_t i = 1; i < q_.size(); ++i) {
      if (q_[i]->rank < q_[best]->rank) best = i;  // earliest among ties
    }
    for (std::size_t i = 0; i < q_.size(); ++i) {
      if (q_[i]->flow_id == q_[best]->flow_id && q_[i]->src_host == q_[best]->src_host) {
        return erase(i);
      }
    }
    return nullptr;
  }
  std::uint64_t bytes() const { return bytes_; }
  std::size_t packets() const { return q_.size(); }

 private:
  Packet* push(Packet& p) {
    q_.push_back(&p);
    bytes_ += p.wire_bytes;
    return nullptr;
  }
  Packet* erase(std::size_t i) {
    Packet* p = q_[i];
    q_.erase(q_.begin() + static_cast<std::ptrdiff_t>(i));
    bytes_ -= p->wire_bytes;
    return p;
  }
  std::uint64_t limit_;
  std::uint64_t bytes_ = 0;
  std::vector<Packet*> q_;
};

TEST_F(PFabricQueueTest, MatchesABruteForceModelOnRandomTraffic) {
  const std::uint64_t limit = 12'000;
  PFabricQueue q = queue(limit);
  ReferenceQueue ref(limit);
  Rng rng(42, "pfabric-queue-test");
  const std::uint32_t sizes[] = {78, 600, 1578};
  std::uint64_t drops = 0, odd_victims = 0;
  for (int step = 0; step < 200'000; ++step) {
    if (rng.below(100) < 60) {
      Packet& p = packet(static_cast<std::uint32_t>(rng.below(12)), rng.below(30),
                         static_cast<std::uint64_t>(step), sizes[rng.below(3)],
                         static_cast<std::uint32_t>(rng.below(2)));
      Packet* got = q.enqueue(p);
      Packet* want = ref.enqueue(p);
      ASSERT_EQ(got, want) << "enqueue at step " << step;
      if (got != nullptr) {
        ++drops;
        if (got != &p && got->wire_bytes < 1578) ++odd_victims;
        pool_.release(got);
      }
    } else {
      Packet* got = q.dequeue();
      ASSERT_EQ(got, ref.dequeue()) << "dequeue at step " << step;
      if (got != nullptr) pool_.release(got);
    }
    ASSERT_EQ(q.bytes(), ref.bytes());
    ASSERT_EQ(q.packets(), ref.packets());
    ASSERT_LE(q.bytes(), limit);
  }
  EXPECT_GT(drops, 1000u) << "the test must exercise the full buffer";
  EXPECT_GT(odd_victims, 0u);
}

// ---------------------------------------------------------------------------
// The transport

constexpr std::uint32_t kMtu = 1500;
constexpr std::uint32_t kHeader = 78;

ExperimentConfig pfabric_star(int hosts) {
  ExperimentConfig config = testing::star(hosts, kMtu);
  config.header_bytes = kHeader;
  config.transport = "pfabric";
  return config;
}

PFabricTransport& pfabric(Experiment& e) {
  return dynamic_cast<PFabricTransport&>(e.mutable_transport());
}

// The unloaded RTT of a full packet and its ACK through one 100 Gbit/s switch
// with 1 us links, and twice the bandwidth-delay product.
constexpr TimePs kStarRttPs = 2 * serialization_ps(kMtu + kHeader, 100'000'000'000) + 2 * kPsPerUs +
                              2 * serialization_ps(kHeader, 100'000'000'000) + 2 * kPsPerUs;
constexpr std::uint64_t kStarBdpBytes =
    static_cast<std::uint64_t>(Uint128{100'000'000'000} * kStarRttPs / 8'000'000'000'000u);

TEST(PFabric, DerivesWindowAndTimeoutFromThePath) {
  ExperimentConfig config = pfabric_star(3);
  add_flow(config, 1, 0, 10'000);
  Experiment e(config);
  e.run();
  const PFabricTransport::PathInfo info = pfabric(e).path_info(0);
  EXPECT_EQ(info.base_rtt_ps, kStarRttPs);
  EXPECT_EQ(info.bdp_bytes, kStarBdpBytes);
  // 53 KB: 34 full packets; the paper's IW = BDP.
  EXPECT_EQ(info.initial_window_packets, (kStarBdpBytes + kMtu + kHeader - 1) / (kMtu + kHeader));
  EXPECT_EQ(info.max_window_packets,
            (2 * kStarBdpBytes + kMtu + kHeader - 1) / (kMtu + kHeader) - 1);
  // The RTT plus the time to drain one full (default, 234 KB) switch buffer.
  EXPECT_EQ(info.rto_ps, kStarRttPs + serialization_ps(234'000, 100'000'000'000));
  ASSERT_TRUE(e.recorder().all_complete());
  // Alone on an idle path a flow that fits in its first window finishes in its
  // ideal time: it starts at line rate.
  EXPECT_LT(e.recorder().records()[0].slowdown(), 1.02);
}

TEST(PFabric, TimeoutIsThreeRttsWithATwoBdpBuffer) {
  ExperimentConfig config = pfabric_star(3);
  config.transport_params["buffer_bytes"] = static_cast<double>(2 * kStarBdpBytes);
  add_flow(config, 1, 0, 10'000);
  Experiment e(config);
  e.run();
  EXPECT_EQ(pfabric(e).path_info(0).rto_ps, 3 * kStarRttPs);
  // Every switch port got the pFabric queue with that buffer; host NICs did not.
  for (std::size_t i = 0; i < e.network().ports().size(); ++i) {
    const auto* q = dynamic_cast<const PFabricQueue*>(&e.network().ports()[i]->queue());
    if (e.network().port_at_host(i)) {
      EXPECT_EQ(q, nullptr) << e.network().ports()[i]->name();
    } else {
      ASSERT_NE(q, nullptr) << e.network().ports()[i]->name();
      EXPECT_EQ(q->limits().port_bytes, 2 * kStarBdpBytes);
    }
  }
}

TEST(PFabric, ShortFlowCutsThroughLongFlowsToTheSameReceiver) {
  ExperimentConfig config = pfabric_star(4);
  config.transport_params["buffer_bytes"] = static_cast<double>(2 * kStarBdpBytes);
  // Two long flows keep the receiver's downlink busy and its buffer full.
  add_flow(config, 1, 0, 10'000'000);
  add_flow(config, 3, 0, 10'000'000);
  // Short flows arrive while they run: behind a full FIFO buffer they would
  // wait about 2 RTT (slowdown ~3).
  add_flow(config, 2, 0, 30'000, 300 * kPsPerUs);
  add_flow(config, 2, 0, 3'000, 700 * kPsPerUs);
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  const auto& records = e.recorder().records();
  EXPECT_GT(e.network_totals().max_switch_queue_bytes, kStarBdpBytes) << "the buffer must fill";
  for (const std::uint32_t id : {2u, 3u}) {
    EXPECT_LT(records[id].slowdown(), 1.5)
        << "flow " << id << " fct " << ps_to_us(records[id].fct_ps()) << " us";
  }
  // The long flows still finish, and the link stays busy: together they take
  // little more than their bytes at line rate.
  const TimePs both =
      serialization_ps(2 * testing::wire_bytes(10'000'000, kMtu, kHeader), 100'000'000'000);
  EXPECT_LT(static_cast<double>(std::max(records[0].finish_ps, records[1].finish_ps)),
            1.1 * static_cast<double>(both));
  for (const FlowRecord& r : records) {
    EXPECT_EQ(e.transport().delivered_bytes(r.spec.id), r.spec.size_bytes);
  }
}

TEST(PFabric, AcksOvertakeTheDataQueuedTowardTheirSender) {
  ExperimentConfig config = pfabric_star(5);
  config.transport_params["buffer_bytes"] = static_cast<double>(2 * kStarBdpBytes);
  // Two long flows fill the switch port toward host 2...
  add_flow(config, 1, 2, 10'000'000);
  add_flow(config, 3, 2, 10'000'000);
  // ...through which every ACK of this flow from host 2 must pass.
  add_flow(config, 2, 0, 100'000, 300 * kPsPerUs);
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  EXPECT_GT(e.network_totals().max_switch_queue_bytes, kStarBdpBytes) << "the buffer must fill";
  EXPECT_LT(e.recorder().records()[2].slowdown(), 1.2);
}

TEST(PFabric, SenderServesItsShortestFlowFirst) {
  ExperimentConfig config = pfabric_star(3);
  add_flow(config, 0, 1, 5'000'000);               // long, to host 1
  add_flow(config, 0, 2, 200'000, 50 * kPsPerUs);  // short, to host 2, same sender NIC
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  const auto& records = e.recorder().records();
  EXPECT_LT(records[1].slowdown(), 1.2) << "the short flow preempts the long one at the NIC";
  EXPECT_LT(records[0].slowdown(), 1.1);
}

TEST(PFabric, SixteenToOneIncastOfShortFlowsCompletesExactlyOnce) {
  ExperimentConfig config = pfabric_star(17);
  config.transport_params["buffer_bytes"] = static_cast<double>(2 * kStarBdpBytes);
  const std::uint64_t size = 100'000;
  for (int s = 1; s <= 16; ++s) add_flow(config, s, 0, size);
  Experiment e(config);
  e.run();

  ASSERT_TRUE(e.recorder().all_complete());
  const TransportStats stats = e.transport().stats();
  EXPECT_GT(e.network_totals().queue_drops, 100u) << "the incast must overflow the buffer";
  EXPECT_GT(stats.timeouts, 0u);
  EXPECT_GT(stats.retransmissions, 0u);
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_EQ(e.transport().delivered_bytes(r.spec.id), size) << "flow " << r.spec.id;
  }
  // The receiver link is nearly always busy: the last flow finishes close to
  // the time the link needs for every byte.
  const TimePs drain =
      serialization_ps(16 * testing::wire_bytes(size, kMtu, kHeader), 100'000'000'000);
  TimePs last = 0;
  double mean_fct = 0;
  for (const FlowRecord& r : e.recorder().records()) {
    last = std::max(last, r.finish_ps);
    mean_fct += static_cast<double>(r.fct_ps()) / 16;
  }
  EXPECT_GE(last, drain);
  EXPECT_LT(static_cast<double>(last), 1.5 * static_cast<double>(drain));
  // Flows finish one after another (SRPT), not all together at the end: the
  // mean FCT is near serving them one at a time, (1 + 16) / 2 flow times.
  EXPECT_LT(mean_fct, 0.8 * static_cast<double>(drain));
}

TEST(PFabric, EveryByteArrivesExactlyOnceUnderOnePercentLoss) {
  ExperimentConfig config = pfabric_star(5);
  config.network.link_loss_rate = 0.01;  // on every link, data and ACKs alike
  config.seed = 7;
  const std::uint64_t sizes[] = {1, 1499, 1500, 1501, 3'000'000, 5'000'000};
  int i = 0;
  for (const std::uint64_t size : sizes) {
    add_flow(config, 1 + i % 4, 0, size, i * 10 * kPsPerUs);
    ++i;
  }
  Experiment e(config);
  e.run();

  const TransportStats stats = e.transport().stats();
  EXPECT_GT(e.network_totals().wire_losses, 100u) << "the test must actually lose packets";
  EXPECT_GT(stats.retransmissions, 0u);
  EXPECT_GT(stats.timeouts, 0u);
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_TRUE(r.complete()) << "flow " << r.spec.id;
    EXPECT_EQ(e.transport().delivered_bytes(r.spec.id), r.spec.size_bytes) << "flow " << r.spec.id;
  }
}

TEST(PFabric, ProbeModeAfterConsecutiveTimeoutsSendsOneProbePerRtt) {
  ExperimentConfig config = pfabric_star(3);
  config.network.link_loss_rate = 1.0;  // nothing ever arrives
  add_flow(config, 1, 0, 1'000'000);
  Experiment e(config);
  const TimePs until = 500 * kPsPerUs;
  e.run_until(until);
  PFabricTransport& t = pfabric(e);
  const PFabricTransport::PathInfo info = t.path_info(0);
  EXPECT_EQ(e.transport().stats().timeouts, 5u) << "probe mode replaces further timeouts";
  EXPECT_EQ(t.pfabric_stats().probe_mode_entries, 1u);
  // Five RTOs, then one probe per RTT.
  const double expected =
      static_cast<double>(until - 5 * info.rto_ps) / static_cast<double>(info.base_rtt_ps);
  EXPECT_NEAR(static_cast<double>(t.pfabric_stats().probes), expected, 1.5);
  // The first window at line rate, then one segment per timeout.
  EXPECT_EQ(e.transport().stats().data_packets, info.initial_window_packets + 4u);
}

TEST(PFabric, ProbeModeEndsWithTheFirstAckAndTheFlowCompletes) {
  // A receiver downlink with a single packet of buffer starves the larger of
  // two flows until the smaller one ends; the larger one enters probe mode
  // and must leave it and complete.
  ExperimentConfig config = pfabric_star(3);
  config.transport_params["buffer_bytes"] = kMtu + kHeader;
  config.transport_params["rto_us"] = 10;
  add_flow(config, 1, 0, 4'000'000);
  add_flow(config, 2, 0, 8'000'000);
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  EXPECT_GT(pfabric(e).pfabric_stats().probe_mode_entries, 0u);
  EXPECT_GT(pfabric(e).pfabric_stats().probes, 0u);
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_EQ(e.transport().delivered_bytes(r.spec.id), r.spec.size_bytes);
  }
  EXPECT_LT(e.recorder().records()[0].finish_ps, e.recorder().records()[1].finish_ps);
}

TEST(PFabric, AcksAreControlPacketsNotScheduling) {
  ExperimentConfig config = pfabric_star(3);
  add_flow(config, 1, 0, 150'000);  // 100 segments
  Experiment e(config);
  e.run();
  const TransportStats stats = e.transport().stats();
  EXPECT_EQ(stats.data_packets, 100u);
  EXPECT_EQ(stats.control_packets, 100u);
  EXPECT_EQ(stats.control_bytes, 100u * kHeader);
  EXPECT_EQ(stats.scheduling_packets, 0u);
  EXPECT_EQ(e.transport().flow_counters(0).data_packets, 100u);
  EXPECT_EQ(e.transport().flow_counters(0).control_packets, 0u);
}

std::vector<TimePs> finish_times(std::uint64_t seed) {
  ExperimentConfig config = pfabric_star(17);
  config.seed = seed;
  config.network.link_loss_rate = 0.001;
  config.transport_params["buffer_bytes"] = static_cast<double>(2 * kStarBdpBytes);
  for (int s = 1; s <= 16; ++s) {
    add_flow(config, s, 0, 20'000 * static_cast<std::uint64_t>(s), s * kPsPerUs);
  }
  Experiment e(config);
  e.run();
  std::vector<TimePs> finish;
  for (const FlowRecord& r : e.recorder().records()) finish.push_back(r.finish_ps);
  return finish;
}

TEST(PFabric, SameSeedGivesIdenticalFinishTimes) {
  const std::vector<TimePs> first = finish_times(3);
  EXPECT_EQ(first, finish_times(3));
  EXPECT_TRUE(std::none_of(first.begin(), first.end(), [](TimePs t) { return t == kTimeNever; }));
  EXPECT_NE(first, finish_times(4)) << "the loss draws must depend on the seed";
}

// ---------------------------------------------------------------------------
// pfabric-edf: rank = "deadline"

void add_deadline_flow(ExperimentConfig& config, int src, int dst, std::uint64_t size_bytes,
                       TimePs deadline_ps) {
  add_flow(config, src, dst, size_bytes);
  testing::listed_flows(config).back().deadline_ps = deadline_ps;
}

// A large flow with the earlier deadline and a small one with a later one,
// started together, into one receiver or out of one sender's NIC.
std::vector<FlowRecord> large_early_small_late(const char* transport, bool same_sender) {
  ExperimentConfig config = pfabric_star(4);
  config.transport = transport;
  add_deadline_flow(config, 1, 0, 4'000'000, 600 * kPsPerUs);
  add_deadline_flow(config, same_sender ? 1 : 2, same_sender ? 3 : 0, 400'000, 2 * kPsPerMs);
  Experiment e(config);
  e.run();
  EXPECT_TRUE(e.recorder().all_complete());
  return e.recorder().records();
}

TEST(PFabricEdf, ServesTheEarlierDeadlineFirstEvenWhenItIsTheLargerFlow) {
  for (const bool same_sender : {false, true}) {
    SCOPED_TRACE(same_sender ? "one sender's NIC" : "one receiver's switch port");
    const auto edf = large_early_small_late("pfabric-edf", same_sender);
    EXPECT_LT(edf[0].finish_ps, edf[1].finish_ps);
    EXPECT_LT(edf[0].slowdown(), 1.1) << "the early deadline goes first, as if alone";
    EXPECT_LE(edf[0].finish_ps, edf[0].spec.deadline_ps);
    EXPECT_LE(edf[1].finish_ps, edf[1].spec.deadline_ps);
    const auto srpt = large_early_small_late("pfabric", same_sender);
    EXPECT_LT(srpt[1].finish_ps, srpt[0].finish_ps) << "pFabric serves the small flow first";
  }
}

// Flows without a deadline wait for every deadline flow, however far its
// deadline, and go shortest first among themselves.
TEST(PFabricEdf, FlowsWithoutADeadlineGoAfterDeadlineFlowsShortestFirst) {
  ExperimentConfig config = pfabric_star(4);
  config.transport = "pfabric-edf";
  add_flow(config, 1, 0, 200'000);
  add_flow(config, 2, 0, 100'000);
  add_deadline_flow(config, 3, 0, 2'000'000, 50 * kPsPerMs);
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  const auto& r = e.recorder().records();
  EXPECT_LT(r[2].finish_ps, r[1].finish_ps);
  EXPECT_LT(r[1].finish_ps, r[0].finish_ps);
  EXPECT_LT(r[2].slowdown(), 1.1);
}

// A deadline moved earlier moves the flow ahead at once.
TEST(PFabricEdf, ADeadlineUpdateReordersTheFlows) {
  auto finish = [](bool update) {
    ExperimentConfig config = pfabric_star(3);
    config.transport = "pfabric-edf";
    add_deadline_flow(config, 1, 0, 2'000'000, 5 * kPsPerMs);
    add_deadline_flow(config, 2, 0, 2'000'000, 6 * kPsPerMs);
    Experiment e(config);
    e.run_until(50 * kPsPerUs);
    EXPECT_LT(e.transport().delivered_bytes(1), 100'000u) << "the later deadline waits";
    if (update) e.mutable_transport().update_deadline(1, 1 * kPsPerMs);
    e.run_until(config.stop_ps);
    EXPECT_TRUE(e.recorder().all_complete());
    return std::pair{e.recorder().records()[0].finish_ps, e.recorder().records()[1].finish_ps};
  };
  const auto [a_kept, b_kept] = finish(false);
  EXPECT_LT(a_kept, b_kept);
  const auto [a_moved, b_moved] = finish(true);
  EXPECT_LT(b_moved, a_moved);
  EXPECT_LT(b_moved, b_kept);
  EXPECT_LE(b_moved, 1 * kPsPerMs);
}

}  // namespace
}  // namespace safs
