// Events known only when a run ends (flows, a pipeline's ops), written in
// order of start time, so that a trace cut by the event cap is complete up
// to a time rather than missing arbitrary events. Holds at most about twice
// the writer's remaining budget: later events beyond it are dropped early.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/chrome_trace_writer.h"

namespace safs::trace {

class TimeOrderedBatch {
 public:
  explicit TimeOrderedBatch(ChromeTraceWriter& writer);

  void slice(Track track, std::string name, std::string category, TimePs start_ps, TimePs end_ps,
             TraceArgs args = {});
  void instant(Track track, std::string name, std::string category, TimePs at_ps,
               TraceArgs args = {});
  const TraceWindow& window() const { return writer_.window(); }
  // Writes everything held, earliest first (ties: in the order added).
  void write();

 private:
  struct Event {
    TimePs start_ps = 0;
    TimePs end_ps = 0;  // == start_ps for an instant
    std::uint64_t order = 0;
    bool instant = false;
    Track track;
    std::string name;
    std::string category;
    TraceArgs args;
  };
  void add(Event event);
  void keep_earliest(std::size_t count);

  ChromeTraceWriter& writer_;
  std::size_t budget_;
  std::vector<Event> events_;
  std::uint64_t next_order_ = 0;
};

}  // namespace safs::trace
