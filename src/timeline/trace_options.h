// The `run --trace*` options (docs/traces.md).
#pragma once

#include <cstdint>
#include <string>

namespace safs::timeline {

struct TraceOptions {
  std::string path;  // empty: no trace
  double from_ms = 0;
  double to_ms = -1;  // < 0: to the end of the run
  std::uint64_t max_events = 1'000'000;
  std::string ports = "receivers";  // see trace_ports.h
  double sample_us = 10;            // queue counters: sampled this often
};

}  // namespace safs::timeline
