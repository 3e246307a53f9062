// Fixed formatting for the CSV outputs, so that they are byte-identical
// across runs and machines.
#pragma once

#include <cstdio>
#include <string>

#include "base/time.h"

namespace safs {

// Seconds with nanosecond digits ("%.9f"), the unit of every *_s column.
inline std::string seconds_text(double seconds) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9f", seconds);
  return buf;
}
inline std::string seconds_text(TimePs t) { return seconds_text(ps_to_sec(t)); }

// The same text appended to `out`, for lines written once per flow (no
// temporary string).
inline void append_seconds(std::string& out, TimePs t) {
  char buf[40];
  const int n = std::snprintf(buf, sizeof buf, "%.9f", ps_to_sec(t));
  out.append(buf, static_cast<std::size_t>(n));
}

}  // namespace safs
