// Writes Chrome trace-event JSON (the format Perfetto and chrome://tracing
// open) as events come, so a long run never holds its trace in memory:
// "X" slices, "i" instants, "C" counters and "M" track names. Timestamps are
// microseconds printed exactly from integer picoseconds, so the same events
// always give the same bytes.
//
// Bounds: events outside a time window are skipped, and after `max_events`
// events the rest are dropped; the trace then ends with a global instant
// "trace truncated" at the earliest time from which events may be missing.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <string_view>

#include "base/time.h"
#include "trace/trace_args.h"

namespace safs::trace {

struct TraceWindow {
  TimePs from_ps = 0;
  TimePs to_ps = kTimeNever;

  bool contains(TimePs at) const { return at >= from_ps && at <= to_ps; }
  bool overlaps(TimePs start_ps, TimePs end_ps) const {
    return start_ps <= to_ps && end_ps >= from_ps;
  }
};

// A timeline row: a thread `tid` of process `pid` (viewers group by process).
struct Track {
  int pid = 0;
  int tid = 0;
};

// Microseconds with six decimals (exact picoseconds), e.g. "1234.000500".
std::string format_us(TimePs t);

class ChromeTraceWriter {
 public:
  ChromeTraceWriter(std::ostream& out, TraceWindow window, std::uint64_t max_events);
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Track names and order: metadata, never skipped, dropped or counted.
  void name_process(int pid, std::string_view name, int sort_index);
  void name_thread(Track track, std::string_view name, int sort_index);

  // Each returns whether the event was written. A slice is written if any
  // part of it lies in the window (it is not clipped).
  bool slice(Track track, std::string_view name, std::string_view category, TimePs start_ps,
             TimePs end_ps, const TraceArgs& args = {});
  bool instant(Track track, std::string_view name, std::string_view category, TimePs at_ps,
               const TraceArgs& args = {});
  // One counter track per (pid, name); `values` holds its series.
  bool counter(int pid, std::string_view name, TimePs at_ps, const TraceArgs& values);

  // Nothing after `at_ps` is written any more; the trace counts as truncated
  // from there (for callers that ration the budget between kinds of events).
  void cut_at(TimePs at_ps);
  // `count` events from `from_ps` on were dropped before reaching the writer.
  void note_dropped(std::uint64_t count, TimePs from_ps);

  // Closes the JSON (with the truncation note if needed). Call once, last.
  void finish();

  const TraceWindow& window() const { return window_; }
  std::uint64_t events_written() const { return written_; }
  std::uint64_t events_dropped() const { return dropped_; }
  std::uint64_t events_left() const { return max_events_ - written_; }
  bool truncated() const { return truncated_from_ps_ != kTimeNever; }

 private:
  bool admit(TimePs at_ps);  // counts the event against the cap
  void begin_event(const char* phase, int pid);
  void end_event(const TraceArgs& args);

  std::ostream& out_;
  TraceWindow window_;
  std::uint64_t max_events_;
  std::uint64_t written_ = 0;
  std::uint64_t dropped_ = 0;
  TimePs truncated_from_ps_ = kTimeNever;
  bool first_ = true;
};

}  // namespace safs::trace
