// What a workload asks a transport to move: one flow (a message, in Homa's
// terms) of a known size from one host to another.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/time.h"

namespace safs {

enum class FlowClass : std::uint8_t { kBackground, kUrgent };

std::string_view to_string(FlowClass c);

struct FlowSpec {
  std::uint32_t id = 0;  // dense: 0, 1, 2, ... in the order the workload declares them
  int src = 0;
  int dst = 0;
  std::uint64_t size_bytes = 0;
  TimePs start_ps = 0;
  TimePs deadline_ps = kTimeNever;  // absolute; kTimeNever = none
  FlowClass flow_class = FlowClass::kBackground;
  // The consumer op this flow feeds; flows with the same value form a group
  // whose last arrival is what counts. 0 = none.
  std::uint64_t dependency = 0;
  std::uint32_t criticality = 0;  // higher outranks an earlier deadline under overload

  bool has_deadline() const { return deadline_ps != kTimeNever; }
};

inline std::string_view to_string(FlowClass c) {
  return c == FlowClass::kUrgent ? "urgent" : "background";
}

}  // namespace safs
