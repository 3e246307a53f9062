// A flow's SAFS sender state (in its SenderFlow's extension), shared by the
// files that implement SafsTransport::SenderAgent.
#pragma once

#include <cstdint>

#include "core/grant.h"
#include "core/uplink_report.h"
#include "transport/safs/safs_sender_agent.h"

namespace safs {

inline constexpr double kNoLimit = core::kNoUplinkLimit;

struct SafsTransport::SenderAgent::FlowState final : FlowExtension {
  core::GrantHolder grant;
  std::uint64_t unscheduled_limit = 0;  // bytes [0, limit) go out before any grant
  std::uint64_t sent_end_bytes = 0;     // end of the highest byte sent: below it, a resend
  bool blind_loss_counted = false;      // this flow's blind loss has reached the budget
  TimePs started_ps = 0;
  TimePs next_send_ps = 0;                 // pacing: earliest time of the next paced packet
  double uplink_available_bps = kNoLimit;  // what this host's uplink can give the flow
  core::UplinkReport report;               // what the receiver was last told of that
  bool on_uplink_list = false;
  bool on_stream_lease = false;  // started under its stream's previous lease
  bool granted = false;          // a grant of its own arrived
  bool window_only = false;      // background with grant_background off: never granted
  // On its receiver's background stream (background_streams): paced by the
  // stream's grant and pacer, not a grant of its own.
  bool on_background_stream = false;
  std::uint32_t version = 0;  // of the flow's timestamp; raised at every move
};

}  // namespace safs
