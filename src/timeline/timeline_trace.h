// `safs-sim run --trace FILE`: a Chrome trace-event JSON timeline of the run
// (open it in Perfetto or chrome://tracing). Per host: its compute ops and
// bubbles, the grants it sends, the flows it receives with their no-bubble
// timestamps; per chosen switch port: its queue depth as a counter.
//
// It only observes (grant and step observers, the run loop's sampler), so
// the run's results are the same with or without it. Bounded: a time window,
// and at most `max_events` events, of which the events written during the
// run (grants, queue counters, inference steps' ops) may use half; when they
// do, the trace ends at that simulated time, and the flows and a pipeline's
// ops, written after the run, get the rest, earliest first.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "experiment/experiment.h"
#include "timeline/sampler_fanout.h"
#include "timeline/trace_options.h"
#include "timeline/trace_tracks.h"
#include "trace/chrome_trace_writer.h"
#include "workload/compute/compute_engine.h"

namespace safs::timeline {

class TimelineTrace {
 public:
  TimelineTrace(Experiment& experiment, SamplerFanout& samplers, const TraceOptions& options);
  // After the run: the flows and a pipeline's ops; then the file is complete.
  void finish();

  std::uint64_t events_written() const { return writer_->events_written(); }
  bool truncated() const { return writer_->truncated(); }

 private:
  // During the run: whether the run's half of the budget is left; if not,
  // the trace is cut at `now_ps`.
  bool run_budget_left(TimePs now_ps);
  void on_grant(TimePs at, std::uint32_t flow_id, double rate_bps, int receiver_host);
  void on_step(const ComputeEngine& engine);
  void sample_queues(TimePs at);
  void note_new_receivers();

  Experiment& experiment_;
  std::string path_;
  std::string partial_path_;  // written here, renamed to path_ when complete
  std::ofstream file_;
  std::unique_ptr<trace::ChromeTraceWriter> writer_;
  std::unique_ptr<TraceTracks> tracks_;
  std::uint64_t run_budget_;
  long steps_seen_ = 0;
  std::vector<std::size_t> ports_;
  bool only_receivers_ = false;
  std::vector<bool> receives_;                  // per host: some flow to it has started
  std::size_t records_seen_ = 0;                // flow records scanned into receives_
  std::vector<std::int64_t> last_queue_bytes_;  // per entry of ports_; -1: none written yet
};

}  // namespace safs::timeline
