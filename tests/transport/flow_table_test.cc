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

}  // namespace
}  // namespace safs
