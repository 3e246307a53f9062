// The receiver's record of arrived segments: exactly-once delivery, the
// cumulative point, and memory that follows the reordering span, not the
// flow's size.
#include "transport/common/segment_tracker.h"

#include <gtest/gtest.h>

namespace safs {
namespace {

constexpr std::uint32_t kSegment = 4096;

TEST(SegmentTracker, CountsEachSegmentOnceAndAdvancesOverContiguousOnes) {
  SegmentTracker t(10 * kSegment + 100, kSegment);  // 11 segments, the last 100 bytes
  EXPECT_TRUE(t.add(2 * kSegment));
  EXPECT_FALSE(t.add(2 * kSegment));
  EXPECT_EQ(t.cumulative_bytes(), 0u);
  EXPECT_TRUE(t.add(0));
  EXPECT_EQ(t.cumulative_bytes(), kSegment);
  EXPECT_TRUE(t.add(kSegment));
  EXPECT_EQ(t.cumulative_bytes(), 3u * kSegment);
  EXPECT_FALSE(t.add(0));  // below the cumulative point: a duplicate
  for (std::uint64_t i = 3; i <= 10; ++i) EXPECT_TRUE(t.add(i * kSegment));
  EXPECT_TRUE(t.complete());
  EXPECT_EQ(t.cumulative_bytes(), 10u * kSegment + 100);
  EXPECT_EQ(t.delivered_bytes(), 10u * kSegment + 100);
}

TEST(SegmentTracker, MemoryFollowsTheReorderingSpanNotTheFlowSize) {
  SegmentTracker huge(1'000'000'000'000'000ull, kSegment);  // 1e15 bytes
  for (std::uint64_t i = 0; i < 100'000; ++i) ASSERT_TRUE(huge.add(i * kSegment));
  EXPECT_EQ(huge.ring_segments(), 64u) << "in-order arrivals need one word";
  EXPECT_EQ(huge.cumulative_bytes(), 100'000ull * kSegment);

  // A hole 1000 segments wide: the ring grows to hold the span, and keeps
  // every pending bit across the growth.
  const std::uint64_t hole = 100'000;
  for (std::uint64_t i = hole + 1; i <= hole + 1000; ++i) ASSERT_TRUE(huge.add(i * kSegment));
  EXPECT_GE(huge.ring_segments(), 1001u);
  EXPECT_LE(huge.ring_segments(), 2048u);
  EXPECT_EQ(huge.cumulative_bytes(), hole * kSegment);
  for (std::uint64_t i = hole + 1; i <= hole + 1000; ++i) EXPECT_TRUE(huge.has(i));
  EXPECT_FALSE(huge.has(hole));
  EXPECT_TRUE(huge.add(hole * kSegment));  // the hole fills
  EXPECT_EQ(huge.cumulative_bytes(), (hole + 1001) * kSegment);
  EXPECT_FALSE(huge.has(hole + 1001));
}

}  // namespace
}  // namespace safs
