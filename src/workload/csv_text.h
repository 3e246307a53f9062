// Fixed formatting for the CSV outputs, so that they are byte-identical
// across runs and machines.
#pragma once

#include <cstdio>
#include <string>

#include "base/time.h"

namespace safs {

// Seconds with nanosecond digits ("%.9f"), the unit of every *_s column,
// appended to `out` (lines written once per flow make no temporary string).
inline void append_seconds(std::string& out, double seconds) {
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%.9f", seconds);
  out.append(buf, static_cast<std::size_t>(n));
}
inline void append_seconds(std::string& out, TimePs t) { append_seconds(out, ps_to_sec(t)); }

inline std::string seconds_text(double seconds) {
  std::string text;
  append_seconds(text, seconds);
  return text;
}
inline std::string seconds_text(TimePs t) { return seconds_text(ps_to_sec(t)); }

}  // namespace safs
