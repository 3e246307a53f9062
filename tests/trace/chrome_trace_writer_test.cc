// The trace writer on its own: exact timestamps, valid JSON, the window, the
// event cap and the time-ordered batch.
#include "trace/chrome_trace_writer.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "trace/time_ordered_batch.h"

namespace safs::trace {
namespace {

using nlohmann::json;

json events_of(const std::string& text) { return json::parse(text).at("traceEvents"); }

TEST(FormatUs, PrintsExactPicoseconds) {
  EXPECT_EQ(format_us(0), "0.000000");
  EXPECT_EQ(format_us(1), "0.000001");
  EXPECT_EQ(format_us(1'234'567'890), "1234.567890");
  EXPECT_EQ(format_us(-1'500'000), "-1.500000");
}

TEST(ChromeTraceWriter, WritesEveryKindAsValidJson) {
  std::ostringstream out;
  ChromeTraceWriter writer(out, {}, 100);
  writer.name_process(1, "host \"0\"", 0);
  writer.name_thread({1, 2}, "compute", 2);
  EXPECT_TRUE(writer.slice({1, 2}, "F s0 mb0", "op", kPsPerUs, 3 * kPsPerUs,
                           TraceArgs().add("op", 7).add("finished", true)));
  EXPECT_TRUE(writer.instant({1, 3}, "grant", "grant", 2 * kPsPerUs,
                             TraceArgs().add_fixed("rate_gbps", 12.5, 3)));
  EXPECT_TRUE(writer.counter(9, "switch->host0", 5 * kPsPerUs,
                             TraceArgs().add("queue_bytes", std::int64_t{4096})));
  writer.finish();
  const json events = events_of(out.str());
  ASSERT_EQ(events.size(), 7u);  // 4 metadata, 3 events
  EXPECT_EQ(events[0]["args"]["name"], "host \"0\"");
  EXPECT_EQ(events[4]["ph"], "X");
  EXPECT_EQ(events[4]["dur"], 2.0);
  EXPECT_EQ(events[4]["args"]["op"], 7);
  EXPECT_EQ(events[5]["ph"], "i");
  EXPECT_EQ(events[5]["args"]["rate_gbps"], 12.5);
  EXPECT_EQ(events[6]["ph"], "C");
  EXPECT_EQ(events[6]["args"]["queue_bytes"], 4096);
  EXPECT_EQ(writer.events_written(), 3u);
  EXPECT_FALSE(json::parse(out.str())["otherData"]["truncated"].get<bool>());
}

TEST(ChromeTraceWriter, SkipsEventsOutsideTheWindow) {
  std::ostringstream out;
  ChromeTraceWriter writer(out, {10 * kPsPerUs, 20 * kPsPerUs}, 100);
  EXPECT_FALSE(writer.instant({1, 1}, "early", "x", 9 * kPsPerUs));
  EXPECT_TRUE(writer.instant({1, 1}, "inside", "x", 10 * kPsPerUs));
  EXPECT_TRUE(writer.slice({1, 1}, "overlapping", "x", 5 * kPsPerUs, 12 * kPsPerUs));
  EXPECT_FALSE(writer.counter(1, "late", 21 * kPsPerUs, TraceArgs().add("v", 1)));
  writer.finish();
  EXPECT_EQ(events_of(out.str()).size(), 2u);
}

TEST(ChromeTraceWriter, CapDropsTheRestAndMarksWhereTheTraceStops) {
  std::ostringstream out;
  ChromeTraceWriter writer(out, {}, 2);
  for (int i = 5; i >= 1; --i) writer.instant({1, 1}, "e", "x", i * kPsPerUs);
  writer.finish();
  EXPECT_EQ(writer.events_written(), 2u);
  EXPECT_EQ(writer.events_dropped(), 3u);
  const json trace = json::parse(out.str());
  const json& last = trace["traceEvents"].back();
  EXPECT_EQ(last["name"], "trace truncated");
  EXPECT_EQ(last["ts"], 1.0);  // the earliest dropped event
  EXPECT_TRUE(trace["otherData"]["truncated"].get<bool>());
}

TEST(TimeOrderedBatch, WritesEarliestFirstAndKeepsTheEarliestUnderTheCap) {
  std::ostringstream out;
  ChromeTraceWriter writer(out, {}, 3);
  TimeOrderedBatch batch(writer);
  // Enough events that the batch prunes while adding, not only at the end.
  for (int i = 2000; i >= 1; --i) {
    batch.slice({1, 1}, std::to_string(i), "x", i * kPsPerUs, i * kPsPerUs + 1);
  }
  batch.instant({1, 1}, "marker", "x", 2 * kPsPerUs);
  batch.write();
  writer.finish();
  const json events = events_of(out.str());
  ASSERT_EQ(events.size(), 4u);  // three kept and the truncation note
  EXPECT_EQ(events[0]["name"], "1");
  EXPECT_EQ(events[1]["name"], "2");
  EXPECT_EQ(events[2]["name"], "marker");  // added after slice 2 at the same time
  EXPECT_EQ(events[3]["ts"], 3.0);
}

}  // namespace
}  // namespace safs::trace
