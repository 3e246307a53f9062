// StrictPriorityQueue: service order, drop-tail admission, the shared buffer,
// and DCTCP-style ECN marking on the instantaneous queue.
#include "net/priority_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "engine/rng.h"
#include "net/packet_pool.h"
#include "support/queues.h"

namespace safs {
namespace {

class QueueTest : public ::testing::Test {
 protected:
  Packet& packet(std::uint32_t wire_bytes, std::uint64_t seq = 0, std::uint8_t priority = 0,
                 bool ect = false) {
    Packet& p = *pool_.acquire();
    p.wire_bytes = wire_bytes;
    p.seq = seq;
    p.priority = priority;
    p.ecn_capable = ect;
    return p;
  }
  // Enqueues and expects admission.
  void admit(StrictPriorityQueue& q, Packet& p) { ASSERT_EQ(q.enqueue(p), nullptr); }
  // Drains the queue, returning sequence numbers in service order.
  std::vector<std::uint64_t> drain(StrictPriorityQueue& q) { return testing::drain_seqs(q, pool_); }

  PacketPool pool_;
};

TEST_F(QueueTest, EmptyQueue) {
  StrictPriorityQueue q(PriorityQueueConfig{});
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.dequeue(), nullptr);
  EXPECT_EQ(q.bytes(), 0u);
  EXPECT_EQ(q.packets(), 0u);
}

TEST_F(QueueTest, FifoWithinOneLevel) {
  StrictPriorityQueue q(PriorityQueueConfig{});
  for (std::uint64_t seq = 0; seq < 10; ++seq) admit(q, packet(100, seq, 3));
  EXPECT_EQ(q.packets(), 10u);
  EXPECT_EQ(q.bytes(), 1000u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
}

TEST_F(QueueTest, StrictPriorityThenFifo) {
  StrictPriorityQueue q(PriorityQueueConfig{});
  const std::vector<std::uint8_t> prios = {0, 7, 3, 7, 0, 5, 3, 1, 7, 6, 2, 4};
  for (std::size_t i = 0; i < prios.size(); ++i) admit(q, packet(100, i, prios[i]));
  // 7: seqs 1, 3, 8; 6: 9; 5: 5; 4: 11; 3: 2, 6; 2: 10; 1: 7; 0: 0, 4.
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{1, 3, 8, 9, 5, 11, 2, 6, 10, 7, 0, 4}));
}

// Random interleaving of enqueues and dequeues against a reference model;
// peek() names the packet dequeue() returns next.
TEST_F(QueueTest, RandomInterleavingMatchesModel) {
  StrictPriorityQueue q(PriorityQueueConfig{});
  Rng rng(3, "priority-queue-model");
  std::vector<std::vector<std::uint64_t>> model(kNumPriorities);
  std::uint64_t next_seq = 0;
  std::uint64_t model_bytes = 0;
  for (int step = 0; step < 20000; ++step) {
    if (rng.below(5) < 3) {
      const auto prio = static_cast<std::uint8_t>(rng.below(kNumPriorities));
      const auto bytes = static_cast<std::uint32_t>(64 + rng.below(1437));
      admit(q, packet(bytes, next_seq, prio));
      model[prio].push_back(next_seq++);
      model_bytes += bytes;
    } else {
      const Packet* peeked = q.peek();  // the port's prefetch hint: exact
      Packet* p = q.dequeue();
      ASSERT_EQ(peeked, p);
      int level = kNumPriorities - 1;
      while (level >= 0 && model[level].empty()) --level;
      if (level < 0) {
        ASSERT_EQ(p, nullptr);
        continue;
      }
      ASSERT_NE(p, nullptr);
      ASSERT_EQ(p->priority, level);
      ASSERT_EQ(p->seq, model[level].front());
      model[level].erase(model[level].begin());
      model_bytes -= p->wire_bytes;
      pool_.release(p);
    }
    ASSERT_EQ(q.bytes(), model_bytes);
  }
}

TEST_F(QueueTest, DropTailWhenPortBufferFull) {
  PriorityQueueConfig config;
  config.limits.port_bytes = 4500;
  StrictPriorityQueue q(config);
  for (std::uint64_t seq = 0; seq < 3; ++seq) admit(q, packet(1500, seq, 2));
  EXPECT_EQ(q.bytes(), 4500u);  // exactly full is allowed

  Packet& late = packet(1500, 3, 7);
  EXPECT_EQ(q.enqueue(late), &late);  // the arriving packet is dropped
  EXPECT_EQ(q.bytes(), 4500u);
  EXPECT_EQ(q.packets(), 3u);
  pool_.release(&late);

  Packet& tiny = packet(1, 4);
  EXPECT_EQ(q.enqueue(tiny), &tiny);  // even one byte over is refused
  pool_.release(&tiny);

  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{0, 1, 2}));  // queue unchanged
  EXPECT_EQ(pool_.live(), 0u);
}

TEST_F(QueueTest, SmallerPacketFitsAfterDrop) {
  PriorityQueueConfig config;
  config.limits.port_bytes = 4500;
  StrictPriorityQueue q(config);
  admit(q, packet(4000, 0));
  Packet& big = packet(501, 1);
  EXPECT_EQ(q.enqueue(big), &big);
  pool_.release(&big);
  admit(q, packet(500, 2));
  EXPECT_EQ(q.bytes(), 4500u);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{0, 2}));
}

TEST_F(QueueTest, SpaceFreedByDequeueIsReusable) {
  PriorityQueueConfig config;
  config.limits.port_bytes = 3000;
  StrictPriorityQueue q(config);
  admit(q, packet(1500, 0));
  admit(q, packet(1500, 1));
  Packet& p = packet(1500, 2);
  EXPECT_EQ(q.enqueue(p), &p);
  Packet* out = q.dequeue();
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out->seq, 0u);
  pool_.release(out);
  admit(q, p);
  EXPECT_EQ(drain(q), (std::vector<std::uint64_t>{1, 2}));
}

TEST_F(QueueTest, SharedBufferLimitsAdmissionAcrossQueues) {
  SharedBuffer shared;
  shared.capacity_bytes = 4000;
  PriorityQueueConfig config;
  config.limits.port_bytes = 3000;
  config.limits.shared = &shared;
  StrictPriorityQueue a(config);
  StrictPriorityQueue b(config);

  admit(a, packet(1500, 0));
  admit(a, packet(1500, 1));
  EXPECT_EQ(shared.used_bytes, 3000u);
  admit(b, packet(1000, 10));
  EXPECT_EQ(shared.used_bytes, 4000u);

  // b's own buffer has room (1000 + 1500 <= 3000), the shared pool has not.
  Packet& refused = packet(1500, 11);
  EXPECT_EQ(b.enqueue(refused), &refused);
  EXPECT_EQ(b.bytes(), 1000u);
  EXPECT_EQ(shared.used_bytes, 4000u);

  // Draining a frees shared space that b can then use.
  Packet* out = a.dequeue();
  ASSERT_NE(out, nullptr);
  pool_.release(out);
  EXPECT_EQ(shared.used_bytes, 2500u);
  admit(b, refused);
  EXPECT_EQ(shared.used_bytes, 4000u);
  EXPECT_EQ(b.bytes(), 2500u);

  // The port limit still applies on its own: b is at 2500 of 3000.
  shared.capacity_bytes = 1'000'000;
  Packet& too_big = packet(501, 12);
  EXPECT_EQ(b.enqueue(too_big), &too_big);
  pool_.release(&too_big);

  drain(a);
  drain(b);
  EXPECT_EQ(shared.used_bytes, 0u);
}

// ECN: an ECN-capable packet is marked iff the bytes already queued on its
// arrival exceed K. Its own size does not count.
TEST_F(QueueTest, EcnMarksOnlyAboveThreshold) {
  constexpr std::uint64_t kK = 3000;
  struct Case {
    std::uint32_t queued;
    bool marked;
  };
  for (const Case c : {Case{0, false}, Case{kK - 1, false}, Case{kK, false}, Case{kK + 1, true},
                       Case{2 * kK, true}}) {
    PriorityQueueConfig config;
    config.ecn_threshold_bytes = kK;
    StrictPriorityQueue q(config);
    if (c.queued > 0) admit(q, packet(c.queued, 0, 0, true));
    EXPECT_EQ(q.bytes(), c.queued);
    Packet& ect = packet(1500, 1, 0, true);
    Packet& not_ect = packet(1500, 2, 0, false);
    admit(q, ect);
    EXPECT_EQ(ect.ce, c.marked) << "queued " << c.queued;
    // The ECT packet just added raises the queue to queued + 1500 > K for all
    // but the first cases; a non-ECT packet is never marked regardless.
    admit(q, not_ect);
    EXPECT_FALSE(not_ect.ce) << "queued " << c.queued;
    const std::uint64_t expected_marks = (c.marked ? 1u : 0u);
    EXPECT_EQ(q.ecn_marks(), expected_marks) << "queued " << c.queued;
    drain(q);
  }
}

TEST_F(QueueTest, EcnOwnSizeDoesNotCount) {
  PriorityQueueConfig config;
  config.ecn_threshold_bytes = 1000;
  StrictPriorityQueue q(config);
  Packet& jumbo = packet(9000, 0, 0, true);
  admit(q, jumbo);  // queue was empty
  EXPECT_FALSE(jumbo.ce);
  Packet& next = packet(64, 1, 0, true);
  admit(q, next);  // 9000 > 1000 already queued
  EXPECT_TRUE(next.ce);
  EXPECT_EQ(q.ecn_marks(), 1u);
}

TEST_F(QueueTest, EcnCountsOnlyThePacketsOwnPriorityLevel) {
  // Per-queue ECN, as commodity switches configure it: a backlog at levels 0
  // and 1 does not mark a packet at level 7, but a backlog at 7 does.
  PriorityQueueConfig config;
  config.ecn_threshold_bytes = 2000;
  StrictPriorityQueue q(config);
  admit(q, packet(1500, 0, 0));
  admit(q, packet(1500, 1, 1));  // 3000 queued, none at level 7
  Packet& first = packet(100, 2, 7, true);
  admit(q, first);
  EXPECT_FALSE(first.ce);
  admit(q, packet(2000, 3, 7));  // level 7 now holds 2100 bytes
  Packet& second = packet(100, 4, 7, true);
  admit(q, second);
  EXPECT_TRUE(second.ce);
  Packet& low = packet(100, 5, 0, true);  // level 0 holds 1500 <= 2000
  admit(q, low);
  EXPECT_FALSE(low.ce);
}

TEST_F(QueueTest, EcnNeverMarksByDefault) {
  StrictPriorityQueue q(PriorityQueueConfig{});
  for (std::uint64_t seq = 0; seq < 100; ++seq) admit(q, packet(1500, seq, 0, true));
  EXPECT_EQ(q.ecn_marks(), 0u);
  while (Packet* p = q.dequeue()) {
    EXPECT_FALSE(p->ce);
    pool_.release(p);
  }
}

TEST_F(QueueTest, DroppedPacketIsNotMarked) {
  PriorityQueueConfig config;
  config.limits.port_bytes = 3000;
  config.ecn_threshold_bytes = 1000;
  StrictPriorityQueue q(config);
  admit(q, packet(3000, 0, 0, true));
  Packet& dropped = packet(100, 1, 0, true);
  EXPECT_EQ(q.enqueue(dropped), &dropped);
  EXPECT_FALSE(dropped.ce);
  EXPECT_EQ(q.ecn_marks(), 0u);
  pool_.release(&dropped);
}

// Marking is on the queue as it is at each arrival: a burst of ECT packets
// into an empty port with K = 2 packets marks all but the first three.
TEST_F(QueueTest, EcnBurstMarksCount) {
  PriorityQueueConfig config;
  config.ecn_threshold_bytes = 3000;
  StrictPriorityQueue q(config);
  std::vector<Packet*> burst;
  for (std::uint64_t seq = 0; seq < 10; ++seq) {
    Packet& p = packet(1500, seq, 0, true);
    admit(q, p);
    burst.push_back(&p);
  }
  // Queued before each arrival: 0, 1500, 3000 (not > K), 4500, ...
  for (std::size_t i = 0; i < burst.size(); ++i) EXPECT_EQ(burst[i]->ce, i >= 3) << i;
  EXPECT_EQ(q.ecn_marks(), 7u);
}

}  // namespace
}  // namespace safs
