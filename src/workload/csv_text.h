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

}  // namespace safs
