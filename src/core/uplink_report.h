// When a sender tells a receiver that its own uplink limits a flow.
//
// Several receivers may each grant one sender, and together ask more of its
// uplink than it carries. core::uplink_shares says what each flow can get
// (the uplink less what the flows served before it were granted); this says
// when that is worth a report. Every report moves its receiver's allocation,
// which moves other senders' shares, which they report: reported at every
// move, the grants of a busy sender's receivers chased each other (two thirds
// of all control under web-search background). So a limit is reported only
// when it lasts long enough for a receiver to use (the flows ahead hold the
// uplink at least a horizon), only when it moved by more than a threshold,
// and, paced, at most once per horizon per flow (docs/safs.md, "Sender side").
#pragma once

#include <cstdint>
#include <limits>

#include "core/types.h"

namespace safs::core {

// A report's rate when the uplink does not limit the flow.
inline constexpr double kNoUplinkLimit = std::numeric_limits<double>::infinity();

struct UplinkReportConfig {
  double threshold = 0.1;  // re-report an achievable rate when it moves this much
  // Report a limit only when the flows ahead hold the uplink this long
  // (core::uplink_waits): about two reallocation periods and two control
  // delays, what a report needs to pay off (ours; docs/safs.md).
  TimePs horizon_ps = 50 * kPsPerUs;
  // A flow's report changes at most once per horizon (the time one needs to
  // pay off; later moves wait and the latest goes), and a grant above the
  // reported rate repeats the report only if the receiver sent it after the
  // report reached it. false: every move past the threshold is reported at
  // once, and any such grant repeats the report.
  bool paced = true;
  // A flow that the uplink stops limiting is told what the uplink can give
  // it, not "no limit" (while the flows ahead still hold the uplink a
  // horizon), and only where that cap binds: a cap above the grant changes
  // no grant, so moving it is not reported. Told "no limit", its receiver
  // grants it its whole share at once, and the uplink limits it again: a
  // report each way per horizon, for as long as the flows last
  // (tests/core/uplink_convergence_test.cc).
  bool keep_cap = false;
};

// One flow's report, as its sender keeps it.
struct UplinkReport {
  double reported_bps = kNoUplinkLimit;  // last rate reported (kNoUplinkLimit: none in force)
  TimePs reported_ps = 0;                // when it was sent
  TimePs next_report_ps = 0;             // paced: none before this
};

struct ReportDecision {
  enum class Action : std::uint8_t {
    kNone,  // nothing worth reporting
    kSend,  // send rate_bps now (and note_sent)
    kWait,  // worth reporting, but paced: decide again at report.next_report_ps
  };
  Action action = Action::kNone;
  double rate_bps = kNoUplinkLimit;
};

// After the sender's shares moved: `available_bps` is what uplink_shares gives
// the flow (kNoUplinkLimit when the uplink is not the limit), `wait_ps` how
// long the flows ahead hold the uplink, `granted_bps` its grant in force.
ReportDecision decide_report(const UplinkReport& report, double available_bps, double granted_bps,
                             TimePs wait_ps, double uplink_bps, const UplinkReportConfig& config,
                             TimePs now);

// The report went out.
void note_sent(UplinkReport& report, double rate_bps, TimePs now, const UplinkReportConfig& config);

// A grant of `grant_bps` arrived. True when it asks more than the report in
// force allows by over the threshold although the receiver sent it after
// the report reached it (each way takes at most `control_delay_ps`; a grant
// that crossed the report proves nothing): the report was lost, send it
// again.
bool report_was_lost(const UplinkReport& report, double grant_bps, TimePs now,
                     TimePs control_delay_ps, const UplinkReportConfig& config);

}  // namespace safs::core
