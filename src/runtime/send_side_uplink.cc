// The sender's own uplink, shared among the receivers that grant it
// (EndpointConfig::uplink; docs/runtime.md, "Uplink reports"). Each receiver
// grants from its own downlink and cannot see what others granted this
// sender; together they may ask more than its uplink carries. The sender
// serves its granted flows in order (core::uplink_shares: urgent by
// deadline, then background by remaining bytes), holds each to what the
// flows before it leave, and tells a receiver when that limits its flow for
// longer than the receiver needs to act on it (core::decide_report), so the
// receiver can give the difference to another sender. The simulator's SAFS
// sender does the same (safs_sender_agent.cc, rebalance_uplink).
#include <algorithm>
#include <cmath>

#include "runtime/clock.h"
#include "runtime/send_side.h"

namespace safs::runtime {
namespace {

constexpr std::int64_t kHourNs = 3600 * kNsPerSecond;

}  // namespace

void SendSide::rebalance_uplink(std::int64_t now_ns) {
  const double uplink = config_.uplink.uplink_bps;
  if (uplink <= 0) return;
  const TimePs now = to_core_ps(now_ns);
  uplink_flows_.clear();
  uplink_sender_flows_.clear();
  for (auto& [id, flow] : outgoing_) {
    if (flow.state != FlowState::kPending) continue;
    // Only granted flows share: the others go blind or at their fallback share.
    if (!flow.grant.active(now)) {
      flow.uplink_available_bps = core::kNoUplinkLimit;
      continue;
    }
    // A deadline more than an hour ahead (or behind) orders as one an hour
    // ahead (or behind): far beyond any horizon, and safe from overflow in
    // picoseconds.
    const TimePs deadline =
        flow.hint.deadline_ns == kNoDeadlineNs
            ? kTimeNever
            : now + to_core_ps(std::clamp(flow.hint.deadline_ns - now_ns, -kHourNs, kHourNs));
    uplink_flows_.push_back(&flow);
    uplink_sender_flows_.push_back(
        core::sender_flow(flow.id, flow.grant.grant().rate_bps, flow.hint.urgent, deadline,
                          flow.data.size() - flow.sent_bytes, uplink, now));
  }
  core::uplink_shares(uplink_sender_flows_, uplink, uplink_order_, uplink_available_bps_,
                      uplink_waits_ps_, config_.uplink.share);
  for (std::size_t i = 0; i < uplink_flows_.size(); ++i) {
    OutgoingFlow& flow = *uplink_flows_[i];
    flow.uplink_available_bps =
        uplink_available_bps_[i] >= uplink ? core::kNoUplinkLimit : uplink_available_bps_[i];
    const core::ReportDecision decision = core::decide_report(
        flow.report, flow.uplink_available_bps, uplink_sender_flows_[i].granted_bps,
        uplink_waits_ps_[i], uplink, config_.uplink.report, now);
    // A paced report waits for a later call (every tick) to decide again.
    if (decision.action == core::ReportDecision::Action::kSend) {
      send_report(flow, decision.rate_bps, now_ns);
    }
  }
}

void SendSide::send_report(OutgoingFlow& flow, double rate_bps, std::int64_t now_ns) {
  Peer* peer = peers_.find(flow.peer);
  // A receiver that does not read reports would close the connection on one.
  if (peer == nullptr || !advertises(*peer, wire::kCapUplinkReports)) {
    return;
  }
  wire::Report report;
  report.flow = flow.wire_flow;
  report.rate_bps = std::isinf(rate_bps) ? wire::kNoUplinkLimit
                                         : static_cast<std::uint64_t>(std::llround(rate_bps));
  peers_.send(*peer, report);
  core::note_sent(flow.report, rate_bps, to_core_ps(now_ns), config_.uplink.report);
  ++stats_.uplink_reports_sent;
}

}  // namespace safs::runtime
