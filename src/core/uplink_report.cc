#include "core/uplink_report.h"

#include <algorithm>
#include <cmath>

namespace safs::core {

ReportDecision decide_report(const UplinkReport& report, double available_bps, double granted_bps,
                             TimePs wait_ps, double uplink_bps, const UplinkReportConfig& config,
                             TimePs now) {
  const bool was_limited = report.reported_bps != kNoUplinkLimit;
  const bool lasting = wait_ps >= config.horizon_ps;
  const bool limited = available_bps < granted_bps && lasting;
  const bool moved = std::abs(available_bps - report.reported_bps) >
                     config.threshold * std::min(report.reported_bps, uplink_bps);
  if (!(limited || was_limited) || !moved) return {};
  // Kept caps: a cap the grant is below binds nothing, and raising or
  // lowering it (above the grant) would change no grant.
  const bool cap_binds = granted_bps * (1 + config.threshold) >= report.reported_bps;
  if (config.keep_cap && !limited && lasting && !cap_binds) return {};
  if (now < report.next_report_ps) return {.action = ReportDecision::Action::kWait};
  const bool capped = limited || (config.keep_cap && lasting);
  return {.action = ReportDecision::Action::kSend,
          .rate_bps = capped ? available_bps : kNoUplinkLimit};
}

void note_sent(UplinkReport& report, double rate_bps, TimePs now,
               const UplinkReportConfig& config) {
  report.reported_bps = rate_bps;
  report.reported_ps = now;
  if (config.paced) report.next_report_ps = now + config.horizon_ps;
}

bool report_was_lost(const UplinkReport& report, double grant_bps, TimePs now,
                     TimePs control_delay_ps, const UplinkReportConfig& config) {
  return report.reported_bps != kNoUplinkLimit &&
         grant_bps > (1 + config.threshold) * report.reported_bps &&
         (!config.paced || now - report.reported_ps > 2 * control_delay_ps);
}

}  // namespace safs::core
