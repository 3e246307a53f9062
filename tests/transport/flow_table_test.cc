#include "transport/common/flow_table.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace safs {
namespace {

// An entry with state of its own (a heap member) and a count of live ones,
// to see that a released entry is destroyed and a reused one built afresh.
int g_live_entries = 0;
struct CountedEntry {
  CountedEntry() { ++g_live_entries; }
  ~CountedEntry() { --g_live_entries; }
  CountedEntry(const CountedEntry&) = delete;
  CountedEntry& operator=(const CountedEntry&) = delete;
  int value = 0;
  std::vector<int> history;
};

TEST(FlowTable, AReleasedEntryIsDestroyedAndItsMemoryBuildsTheNextOneAfresh) {
  g_live_entries = 0;
  {
    FlowTable<CountedEntry> table;
    CountedEntry& first = table.add(3);
    first.value = 42;
    first.history = {1, 2, 3};
    const CountedEntry* first_address = &first;
    EXPECT_EQ(table.live(), 1u);
    EXPECT_EQ(table.find(2), nullptr);
    EXPECT_EQ(table.find(3), first_address);

    table.release(3);
    EXPECT_EQ(g_live_entries, 0);
    EXPECT_EQ(table.live(), 0u);
    EXPECT_EQ(table.find(3), nullptr);
    table.release(3);  // twice is harmless
    EXPECT_EQ(table.live(), 0u);

    CountedEntry& second = table.add(9);
    EXPECT_EQ(&second, first_address);  // the released memory, reused
    EXPECT_EQ(second.value, 0);
    EXPECT_TRUE(second.history.empty());
    EXPECT_EQ(g_live_entries, 1);

    CountedEntry& third = table.add(10);  // no spare left: new memory
    EXPECT_NE(&third, first_address);
    EXPECT_EQ(table.live(), 2u);
    EXPECT_EQ(g_live_entries, 2);
    table.release(10);
  }
  // Live entries are destroyed with the table, spares freed (the sanitized
  // build checks no memory is lost).
  EXPECT_EQ(g_live_entries, 0);
}

TEST(FlowTable, AddingOverALiveEntryReplacesIt) {
  g_live_entries = 0;
  FlowTable<CountedEntry> table;
  table.add(1).value = 5;
  EXPECT_EQ(table.add(1).value, 0);
  EXPECT_EQ(table.live(), 1u);
  EXPECT_EQ(g_live_entries, 1);
}

// Freed blocks come back last in, first out, and a new block is made only
// when none is spare, so the blocks held follow the peak in use.
TEST(SpareBlocks, ReusesFreedBlocksBeforeMakingNewOnes) {
  SpareBlocks blocks(48);
  EXPECT_EQ(blocks.block_bytes(), 48u);
  void* a = blocks.take();
  void* b = blocks.take();
  EXPECT_NE(a, b);
  blocks.give_back(a);
  EXPECT_EQ(blocks.take(), a);
  blocks.give_back(b);
  blocks.give_back(a);
  EXPECT_EQ(blocks.take(), a);
  EXPECT_EQ(blocks.take(), b);
  void* c = blocks.take();
  EXPECT_NE(c, a);
  EXPECT_NE(c, b);
  for (void* block : {a, b, c}) blocks.give_back(block);  // freed with the pool
}

// After the run a table frees the memory kept from released entries; its
// live entries stay where they are, and a later add still works.
TEST(SpareBlocks, FreeingSparesKeepsLiveEntries) {
  g_live_entries = 0;
  FlowTable<CountedEntry> table;
  for (std::uint32_t id = 0; id < 8; ++id) table.add(id).value = static_cast<int>(id);
  for (std::uint32_t id = 0; id < 6; ++id) table.release(id);
  const CountedEntry* kept = table.find(7);
  table.free_spares();
  EXPECT_EQ(table.find(7), kept);
  EXPECT_EQ(kept->value, 7);
  EXPECT_EQ(table.live(), 2u);
  EXPECT_EQ(table.add(9).value, 0);
  EXPECT_EQ(g_live_entries, 3);
}

}  // namespace
}  // namespace safs
