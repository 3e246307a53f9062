// What the flow summaries need of each flow, kept in id order in about 25
// bytes a flow instead of its whole record: the FCT and slowdown (for the
// percentiles), the lateness (or, while unfinished, the deadline) and a few
// flags. Totals whose sum does not depend on the order (integer bytes and
// packets, first start, last finish) are kept per class. Summing the
// doubles in id order, as summarize() did over whole records, keeps every
// summary byte-identical.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "base/flow.h"
#include "base/time.h"

namespace safs {

struct FlowRecord;

// Order-free totals of one class's flows.
struct FlowTotals {
  std::size_t flows = 0;
  TimePs first_start_ps = kTimeNever;
  TimePs last_finish_ps = 0;          // of the completed ones
  std::uint64_t delivered_bytes = 0;  // including partly delivered flows
  std::uint64_t completed_bytes = 0;  // sizes of the completed flows
  std::uint64_t data_packets = 0;
  std::uint64_t control_packets = 0;

  void add(const FlowRecord& record);
  FlowTotals& operator+=(const FlowTotals& o);
};

// Indexed by FlowClass.
using ClassTotals = std::array<FlowTotals, 2>;
inline std::size_t class_index(FlowClass c) { return static_cast<std::size_t>(c); }

class FlowOutcomes {
 public:
  // The outcome of flow `record.spec.id`, set again if it was set before.
  void set(const FlowRecord& record);

  std::size_t size() const { return flags_.size(); }
  bool known(std::uint32_t id) const { return flags_[id] & kKnown; }
  FlowClass flow_class(std::uint32_t id) const {
    return flags_[id] & kUrgent ? FlowClass::kUrgent : FlowClass::kBackground;
  }
  bool complete(std::uint32_t id) const { return flags_[id] & kComplete; }
  bool has_deadline(std::uint32_t id) const { return flags_[id] & kHasDeadline; }
  bool met_deadline(std::uint32_t id) const { return flags_[id] & kMetDeadline; }
  double fct_s(std::uint32_t id) const { return fct_s_[id]; }
  double slowdown(std::uint32_t id) const { return slowdown_[id]; }
  // How late the flow finished, or was at `now` if unfinished (deadline flows).
  TimePs lateness_ps(std::uint32_t id, TimePs now) const {
    return complete(id) ? lateness_or_deadline_ps_[id] : now - lateness_or_deadline_ps_[id];
  }

 private:
  enum Flag : std::uint8_t {
    kKnown = 1,
    kUrgent = 2,
    kComplete = 4,
    kHasDeadline = 8,
    kMetDeadline = 16,
  };
  std::vector<std::uint8_t> flags_;
  std::vector<double> fct_s_;
  std::vector<double> slowdown_;
  std::vector<TimePs> lateness_or_deadline_ps_;  // complete: finish - deadline; else the deadline
};

}  // namespace safs
