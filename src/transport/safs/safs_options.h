// The options of the SAFS transport and its [transport.safs] knobs: DCTCP's
// (the window underneath) and the receiver scheduler's. Defaults are the
// member initializers here and in src/core.
#pragma once

#include <cstdint>

#include "core/blind_budget.h"
#include "core/receiver_scheduler.h"
#include "core/sender_share.h"
#include "core/uplink_report.h"
#include "net/packet.h"
#include "transport/window/window_options.h"

namespace safs {

struct SafsConfig {
  core::ReceiverConfig receiver;
  std::uint64_t unscheduled_bytes = 0;  // 0: one BDP of the flow's path
  // With unscheduled_bytes = 0, an urgent flow of at most this many BDPs of
  // its path goes entirely blind (ours, measured: docs/safs.md). 1: the first
  // BDP only, as for background flows.
  double whole_flow_blind_bdps = 2;
  std::uint8_t control_priority = kTopPriority;
  std::uint8_t unscheduled_urgent_priority = 6;
  std::uint8_t unscheduled_background_priority = 2;
  std::uint8_t fallback_priority = 0;
  // How long a flow that never got a grant waits before falling back.
  TimePs first_grant_wait_ps = 200 * kPsPerUs;
  // How a sender orders its uplink's flows (core::uplink_shares), and when it
  // reports that its uplink limits a flow (core::decide_report).
  core::UplinkShareOptions uplink_share;
  core::UplinkReportConfig uplink_report;
  // Changes within this window share one reallocation (0: reallocate at once).
  TimePs batch_changes_ps = 0;
  // Above 0, a grant rides an ACK of its flow when one goes within this long
  // (docs/safs.md, "Grants on ACKs"); 0: every grant is a packet of its own.
  TimePs grant_carrier_wait_ps = 0;
  // An urgent flow's lease outlives it: the next urgent transfer from the
  // same sender to the same receiver starts under it (docs/safs.md).
  bool stream_leases = false;
  // The sender announces each urgent transfer its compute schedule will
  // start (when the producing op starts), and the receiver plans it in and
  // grants it ahead, so it starts at its planned rate with no blind bytes
  // (docs/safs.md, "Transfers announced ahead").
  bool announce_ahead = false;
  // A sender's background flows to one receiver that need grants share one
  // grant and one pacer: the receiver allocates the stream as one flow, so
  // background flows coming and going cost no grants (docs/safs.md,
  // "Background streams").
  bool background_streams = false;
  // A flow its sender sends entirely blind is left out of the receiver's
  // allocation: granting it only takes rate from flows that need grants
  // (docs/safs.md, "Flows sent whole blind").
  bool schedule_blind_flows = false;
  // A granted flow is paced at no more than its window per smoothed RTT, so
  // that marks and losses from fabric links no receiver budgets slow it
  // (docs/safs.md, "Sender side"). Off until the evaluation is rerun with it.
  bool rate_within_window = false;
  // A sender caps the blind bytes of its flows to a receiver where its blind
  // bytes were lost before (core::BlindBudget; docs/safs.md, "Sender side").
  bool learn_blind_budget = true;
  // What a learned blind cap bounds in a flow that would go whole blind:
  // false, its blind bytes (the rest waits for a grant); true, its window
  // (it still goes whole blind, clocked by its ACKs: no grant at all).
  bool blind_cap_as_window = false;
  // false: background flows get no grants. They go under their window alone
  // at the lowest priority (the fallback's), and receivers leave them out of
  // their allocation and leave what urgent flows do not need free for them
  // (docs/safs.md, "Background under its window").
  bool grant_background = true;
  // Diagnostic: summary.json's transport_stats also counts the grants the
  // receivers sent, by reason (core::GrantReason), for urgent and background
  // flows. Off, the outputs are as without it.
  bool report_grant_reasons = false;
  core::BlindBudgetOptions blind_budget;
};

struct SafsOptions {
  // SAFS flows are paced below what their receiver can take, so their DCTCP
  // starts from alpha = 0 (no evidence of congestion yet) instead of Linux's
  // conservative 1; the first marked window still sets alpha from the marks.
  DctcpOptions dctcp{.window = {.initial_alpha = 0}};
  SafsConfig safs;
};

KnobTable<SafsOptions> safs_knobs();

}  // namespace safs
