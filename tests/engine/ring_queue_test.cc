// RingQueue: a FIFO that grows by doubling and wraps its head around.
#include "engine/ring_queue.h"

#include <gtest/gtest.h>

#include <deque>
#include <utility>

#include "engine/rng.h"

namespace safs {
namespace {

TEST(RingQueueTest, MatchesDequeThroughGrowthAndWrapping) {
  Rng rng(5, "ring-queue", 0);
  RingQueue<int> ring;
  std::deque<int> reference;
  int next = 0;
  for (int step = 0; step < 200000; ++step) {
    // Pushes slightly more often than pops, so the ring wraps at every
    // capacity on its way up (16, 32, ... slots).
    if (reference.empty() || rng.below(100) < 52) {
      ring.push_back(next);
      reference.push_back(next);
      ++next;
    } else {
      ASSERT_EQ(ring.front(), reference.front()) << "step " << step;
      ASSERT_EQ(ring.pop_front(), reference.front()) << "step " << step;
      reference.pop_front();
    }
    ASSERT_EQ(ring.size(), reference.size()) << "step " << step;
  }
  EXPECT_GT(reference.size(), 1000u);  // it grew past several doublings
  while (!ring.empty()) {
    ASSERT_EQ(ring.pop_front(), reference.front());
    reference.pop_front();
  }
  EXPECT_TRUE(reference.empty());
}

TEST(RingQueueTest, CopiesAndMovesKeepTheOrderAndLeaveTheSourceUsable) {
  RingQueue<int> ring;
  for (int i = 0; i < 40; ++i) ring.push_back(i);
  for (int i = 0; i < 30; ++i) ring.pop_front();  // the head is now mid-ring
  for (int i = 40; i < 50; ++i) ring.push_back(i);

  RingQueue<int> copy = ring;
  RingQueue<int> moved = std::move(ring);
  ASSERT_EQ(copy.size(), 20u);
  ASSERT_EQ(moved.size(), 20u);
  for (int i = 30; i < 50; ++i) {
    EXPECT_EQ(copy.pop_front(), i);
    EXPECT_EQ(moved.pop_front(), i);
  }

  // NOLINTNEXTLINE(bugprone-use-after-move): reuse after a move is the point
  EXPECT_TRUE(ring.empty());
  for (int i = 0; i < 20; ++i) ring.push_back(i);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(ring.pop_front(), i);
}

}  // namespace
}  // namespace safs
