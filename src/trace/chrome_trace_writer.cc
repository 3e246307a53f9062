#include "trace/chrome_trace_writer.h"

#include <algorithm>
#include <cstdio>

namespace safs::trace {

std::string format_us(TimePs t) {
  const bool negative = t < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(t) : static_cast<std::uint64_t>(t);
  const std::uint64_t ps_per_us = static_cast<std::uint64_t>(kPsPerUs);
  char text[48];
  std::snprintf(text, sizeof text, "%s%llu.%06llu", negative ? "-" : "",
                static_cast<unsigned long long>(magnitude / ps_per_us),
                static_cast<unsigned long long>(magnitude % ps_per_us));
  return text;
}

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, TraceWindow window,
                                     std::uint64_t max_events)
    : out_(out), window_(window), max_events_(max_events) {
  // Nanoseconds in the viewer: network events are far shorter than a microsecond.
  out_ << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
}

void ChromeTraceWriter::begin_event(const char* phase, int pid) {
  out_ << (first_ ? "\n" : ",\n") << "{\"ph\":\"" << phase << "\",\"pid\":" << pid;
  first_ = false;
}

void ChromeTraceWriter::end_event(const TraceArgs& args) {
  if (!args.empty()) out_ << ",\"args\":" << args.json();
  out_ << '}';
}

void ChromeTraceWriter::name_process(int pid, std::string_view name, int sort_index) {
  begin_event("M", pid);
  out_ << ",\"name\":\"process_name\"";
  end_event(TraceArgs().add("name", name));
  begin_event("M", pid);
  out_ << ",\"name\":\"process_sort_index\"";
  end_event(TraceArgs().add("sort_index", sort_index));
}

void ChromeTraceWriter::name_thread(Track track, std::string_view name, int sort_index) {
  begin_event("M", track.pid);
  out_ << ",\"tid\":" << track.tid << ",\"name\":\"thread_name\"";
  end_event(TraceArgs().add("name", name));
  begin_event("M", track.pid);
  out_ << ",\"tid\":" << track.tid << ",\"name\":\"thread_sort_index\"";
  end_event(TraceArgs().add("sort_index", sort_index));
}

bool ChromeTraceWriter::admit(TimePs at_ps) {
  if (written_ < max_events_) {
    ++written_;
    return true;
  }
  ++dropped_;
  truncated_from_ps_ = std::min(truncated_from_ps_, at_ps);
  return false;
}

bool ChromeTraceWriter::slice(Track track, std::string_view name, std::string_view category,
                              TimePs start_ps, TimePs end_ps, const TraceArgs& args) {
  if (!window_.overlaps(start_ps, end_ps) || !admit(start_ps)) return false;
  begin_event("X", track.pid);
  out_ << ",\"tid\":" << track.tid << ",\"ts\":" << format_us(start_ps)
       << ",\"dur\":" << format_us(std::max<TimePs>(end_ps - start_ps, 0))
       << ",\"name\":" << json_string(name) << ",\"cat\":" << json_string(category);
  end_event(args);
  return true;
}

bool ChromeTraceWriter::instant(Track track, std::string_view name, std::string_view category,
                                TimePs at_ps, const TraceArgs& args) {
  if (!window_.contains(at_ps) || !admit(at_ps)) return false;
  begin_event("i", track.pid);
  out_ << ",\"tid\":" << track.tid << ",\"s\":\"t\",\"ts\":" << format_us(at_ps)
       << ",\"name\":" << json_string(name) << ",\"cat\":" << json_string(category);
  end_event(args);
  return true;
}

bool ChromeTraceWriter::counter(int pid, std::string_view name, TimePs at_ps,
                                const TraceArgs& values) {
  if (!window_.contains(at_ps) || !admit(at_ps)) return false;
  begin_event("C", pid);
  out_ << ",\"ts\":" << format_us(at_ps) << ",\"name\":" << json_string(name);
  end_event(values);
  return true;
}

void ChromeTraceWriter::cut_at(TimePs at_ps) {
  if (at_ps >= window_.to_ps) return;
  window_.to_ps = at_ps;
  truncated_from_ps_ = std::min(truncated_from_ps_, at_ps);
}

void ChromeTraceWriter::note_dropped(std::uint64_t count, TimePs from_ps) {
  if (count == 0) return;
  dropped_ += count;
  truncated_from_ps_ = std::min(truncated_from_ps_, from_ps);
}

void ChromeTraceWriter::finish() {
  if (truncated()) {
    // A global instant, so the viewer shows where the trace stops being complete.
    begin_event("i", 0);
    out_ << ",\"tid\":0,\"s\":\"g\",\"ts\":" << format_us(truncated_from_ps_)
         << ",\"name\":\"trace truncated\",\"cat\":\"trace\"";
    end_event(TraceArgs()
                  .add("max_events", max_events_)
                  .add("events_dropped", dropped_)
                  .add("complete_until_us", format_us(truncated_from_ps_)));
  }
  out_ << "\n],\"otherData\":"
       << TraceArgs()
              .add("events", written_)
              .add("truncated", truncated())
              .add("events_dropped", dropped_)
              .json()
       << "}\n";
  out_.flush();
}

}  // namespace safs::trace
