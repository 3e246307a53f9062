// An endpoint's settings: where it listens, the downlink its receiver
// allocates, per-peer limits, pacing and the enforcement of grants.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include <map>
#include <optional>
#include <string>

#include "core/downlink_estimator.h"
#include "core/receiver_scheduler.h"
#include "core/sender_share.h"
#include "core/uplink_report.h"
#include "runtime/pacer.h"
#include "runtime/path_contention.h"
#include "runtime/security.h"
#include "runtime/socket_ops.h"

namespace safs::runtime {

// What one peer may hold at once; refused beyond with an Error naming the limit.
struct PeerLimits {
  std::uint32_t max_flows = 64;                   // incoming flows at once
  std::uint64_t max_buffer_bytes = 256ull << 20;  // held for incoming flows (not posted buffers)
  std::uint64_t max_message_bytes = 1ull << 30;   // one flow
  std::uint32_t max_parked_connections = 16;  // data connections that came before their announce
  // Data connections the peer keeps open between flows for reuse
  // (DataReuse): beyond this many, a finished flow's connection is closed.
  // They close with the peer's control connection.
  std::uint32_t max_idle_data_connections = 8;
  // Control bytes read from one connection per loop turn: a flood waits in
  // its own socket (TCP's window closes on it) instead of in memory.
  std::size_t max_control_bytes_per_turn = 64 * 1024;
  // An announced flow whose bytes stop (or never start) for this long is
  // dropped with an Error: its buffer and its grants go to others.
  std::int64_t idle_flow_timeout_ns = 2'000'000'000;
  // A control connection whose bytes stop inside a frame for this long is
  // closed (no control frame is larger than kMaxSealedBodyBytes, a few
  // hundred bytes: one segment), and its flows lose their grants and buffers.
  std::int64_t partial_frame_timeout_ns = 2'000'000'000;
  // A flow granted a rate that sends nothing for this long loses its grants
  // (leaves the scheduler) until its bytes come. An obedient sender applies
  // a grant within a tick or two; this is generous for a loaded host.
  std::int64_t ghost_grace_ns = 100'000'000;
  // A flow its sender reports its uplink holds to a trickle (too little to
  // write within the ghost grace) waits, as one this receiver pauses, but at
  // most this long: then it is dropped with an Error, so a Report cannot
  // hold a receive and its buffer for ever. An honest hold lasts as long as
  // the sender's earlier flows, seconds at most (docs/runtime.md, "Uplink
  // reports").
  std::int64_t sender_hold_timeout_ns = 30'000'000'000;
  // Transfers announced ahead (wire::Plan) the peer may have pending at
  // once, and how far ahead one may start: each reserves part of the
  // downlink from a lead before its start until its flow comes (or a lease
  // after the start). A pipeline stage announces its next few transfers.
  std::uint32_t max_plans = 8;
  std::int64_t max_plan_lead_ns = 10'000'000'000;
};

// What the whole endpoint holds at once, across peers.
struct EndpointLimits {
  // Buffers held for incoming flows (not posted ones), all peers together: a
  // flow that would exceed it is refused with an Error naming the limit.
  std::uint64_t max_buffer_bytes = 1ull << 30;
  // Messages nobody posted a receive for yet, on an endpoint without a
  // message handler, are held (in progress and whole) for a late
  // post_receive(); a flow beyond either bound is refused with an Error.
  // 256 MiB: what one peer may buffer (PeerLimits), so one stage running a
  // few microbatches ahead fits; 1024 messages bound the bookkeeping.
  std::uint64_t max_unexpected_bytes = 256ull << 20;
  std::uint64_t max_unexpected_messages = 1024;
  std::uint32_t max_peers = 256;  // control connections, authenticated or not
  // Accepted connections that have not said what they are, or data
  // connections waiting for their announce. At the cap the oldest is closed
  // to make room: a connection that never speaks cannot keep out one that does.
  std::uint32_t max_unidentified_connections = 1024;
  std::int64_t unidentified_timeout_ns = 2'000'000'000;
  int listen_backlog = kDefaultListenBacklog;  // sized for a job's burst of connects
  // Out of file descriptors: accepting pauses this long (no busy loop).
  std::int64_t accept_backoff_ns = 50'000'000;
  // A sender fails its flows to a peer it has heard nothing from (no grant,
  // no done, no control frame) and that took no bytes for this long.
  std::int64_t silent_peer_timeout_ns = 10'000'000'000;
};

// A sender that sustains more than `ratio` times its grant (plus
// `allowance_bytes` per window, for bursts) for `windows` consecutive
// windows has all its flows demoted to background, and its reads are held to
// its grant. Kernel TCP pacing holds a flow within a few percent of its rate
// (docs/runtime.md, "Data path"), so 1.5 is far outside what an obedient
// sender does. After a grant goes down, bytes the sender sent at the old
// rate still arrive for a round trip, through whatever queue the bottleneck
// holds: for `decrease_grace_ns` the old rate still counts. Behind an
// unmanaged bulk flow's queue the real pipeline's transfers waited up to
// 43 ms (docs/real-pipeline.md); a pause then found up to a megabyte still
// arriving and looked like an overrun.
//
// Standing is kept per identity (its member name with a roster, else the
// peer's host and listen port: SecurityConfig), across
// its flows and its sessions: a demoted identity stays demoted for
// `memory_ns` after its last offence, so a new flow or a reconnect does not
// reset it. An identity whose urgent claims are missed (its urgent flows,
// turned ghost, are dropped for silence or aborted, or its plans go unused)
// more than `max_missed_ratio` of the time, over at
// least `min_claims` claims, is demoted too.
struct EnforcementConfig {
  std::int64_t window_ns = 10'000'000;
  double ratio = 1.5;
  std::uint64_t allowance_bytes = 64 * 1024;
  int windows = 3;
  std::int64_t decrease_grace_ns = 100'000'000;
  std::int64_t memory_ns = 60'000'000'000;
  // Urgent quota: while two or more identities have urgent work, none's
  // urgent flows are granted more than its weighted share of the downlink
  // (times `quota_tolerance`); beyond it, its most-granted urgent flow is
  // scheduled as background. The downlink is split among the jobs with
  // urgent work by `job_weights` (a job as the roster names it, "" without
  // one), then a job's part among its identities by `peer_weights` (a
  // member name, or "host:port" without a roster): urgent_quota.h. Every
  // weight defaults to 1 and must be above 0.
  std::map<std::string, double> peer_weights;
  std::map<std::string, double> job_weights;
  double quota_tolerance = 1.1;
  std::uint32_t min_claims = 8;
  double max_missed_ratio = 0.5;
};

// Who may talk to this endpoint (docs/security.md). Every endpoint of a job
// holds the same job key; a peer that cannot prove it holds the key gets
// nothing. Without a key an endpoint refuses to start unless
// `insecure_loopback_only` is set: then a fixed, public key is used and only
// loopback addresses are accepted, listened on or connected to (tests).
//
// Identities inside the job: with a `roster`, every peer must name a member
// listed there and sign its handshake with that member's key (security.h);
// its standing, weight and quota are then its member name's, whatever
// address or port it comes from. Without one, a peer is known by its host
// and listen port. `member` is who this endpoint speaks for (required when
// its own roster is set, so peers that hold one can check it).
struct SecurityConfig {
  std::optional<JobKey> job_key;    // read_job_key_file() or job_key_from_environment()
  std::optional<MemberKey> member;  // read_member_key_file()
  Roster roster;                    // read_roster_file(); empty: identities are addresses
  bool insecure_loopback_only = false;
  // A control connection must complete the handshake within this long.
  std::int64_t handshake_timeout_ns = 2'000'000'000;
};

// Unmanaged traffic (another application's TCP flow through the same
// bottleneck) takes part of the downlink the receiver grants from. The
// receiver compares what its backlogged flows receive with what it granted
// them (core::DownlinkEstimator, 50 ms windows): two windows below 85% make
// them short of their grants, until one window gives them 95%.
struct ShortfallResponse {
  core::DownlinkEstimatorConfig estimator;
  // While short and the downlink interface carries at least
  // estimator.busy_ratio of the downlink (someone else's traffic took the
  // difference), urgent flows are served EDF at line rate
  // (core::AllocatorConfig::urgent_first: the earliest deadline takes the
  // whole budget, later ones are paused) instead of just in time, until
  // they get their grants again. Just in time paces each flow at its
  // no-bubble rate, with no margin for a rate it cannot get, and its
  // senders' contention fallback then sends all of them unpaced, sharing
  // what TCP leaves in no deadline order (docs/runtime.md, "Namespace
  // testbed": the first deadline missed in every round next to a bulk TCP
  // flow; met in every round with this). Background then gets only its
  // floor. A downlink that is not full means senders that cannot go faster
  // (an uplink other receivers share): no switch, since the whole budget to
  // the earliest would be wasted.
  bool urgent_first = true;
  // Lower the budget the receiver allocates from to what the flows get, and
  // probe back up when they get their grants again; senders of flows that no
  // longer fit see a lower grant and raise their risk callback. Off by
  // default: on the testbed it did not meet more deadlines than a fixed
  // budget, and in one run of two it drove the budget to 80 of 400 Mbit/s
  // and missed all three: the paced flows fall short because the bulk
  // flow's queue costs them packets, and a lower budget does not win those
  // back.
  bool lower_budget = false;
};

// A sender that several receivers grant may be asked for more than its own
// uplink carries (a pipeline stage sending activations one way and
// gradients the other, an FFN host returning results to many attention
// hosts). With `uplink_bps` set, the sender serves its granted flows in
// order (urgent by no-bubble deadline, then background by remaining bytes;
// core::uplink_shares), paces each at most at what the flows before it
// leave, and tells a receiver (a Report) when that limits its flow for long
// enough to matter, with hysteresis and at most once per horizon per flow
// (core::decide_report), so the receiver can give the difference to
// another sender. docs/runtime.md, "Uplink reports".
struct UplinkSharing {
  // What this endpoint can send in all (bits per second); 0: unknown, and
  // each flow goes at its grant, no receiver told of the uplink.
  double uplink_bps = 0;
  // Urgent flows by deadline, not least slack first: slack moves as flows
  // drain and wait, and each swap of two flows would be a report each
  // (tests/core/uplink_convergence_test.cc).
  core::UplinkShareOptions share{.urgent_by_deadline = true};
  // A report pays off once the receiver has it (one control delay, 2 ms),
  // reallocated (every 5 ms) and its grant is back (2 ms): the horizon
  // covers that twice, as the core's 50 us does for its microsecond
  // timescales.
  core::UplinkReportConfig report{.horizon_ps = 20 * kPsPerMs};
};

// Data connections kept open after a flow for the next flow to the same peer:
// a pipeline stage sends one tensor after another to the same neighbour, and
// a new TCP connection per tensor pays a handshake (a round trip) and slow
// start again from the initial window (RFC 6928: 10 segments) each time.
// As a receiver, `enabled` advertises wire::kCapDataReuse and keeps each
// finished flow's connection for the sender's next DataOpen (at most
// PeerLimits::max_idle_data_connections per peer). As a sender, `enabled`
// keeps a finished flow's connection to a peer that advertised it, at most
// `max_idle_per_peer` of them, each closed after `idle_timeout_ns` unused;
// a new flow to that peer takes the one that went idle last. Linux resets
// the congestion window of a connection idle for longer than its RTO
// (net.ipv4.tcp_slow_start_after_idle, unless the host turns it off), so a
// reused connection saves the ramp only between flows that follow within
// about one RTO (200 ms and up).
struct DataReuse {
  bool enabled = true;
  std::uint32_t max_idle_per_peer = 4;
  // A minute: a pipeline's transfers to one peer can be 10-20 s apart
  // behind a competitor's queue (docs/real-pipeline.md), and an idle
  // connection costs a descriptor on each side, at most max_idle_per_peer.
  std::int64_t idle_timeout_ns = 60'000'000'000;
};

struct EndpointConfig {
  PeerAddress listen{"127.0.0.1", 0};
  // What this endpoint's receiver divides among its senders (bits per second).
  double downlink_bps = 1e9;
  // Sent before any grant arrives (Homa's unscheduled bytes: Montazeri et al., SIGCOMM 2018).
  std::uint64_t unscheduled_bytes = 64 * 1024;
  // After its unscheduled bytes a flow waits this long for its first grant,
  // then falls back to a fair share.
  std::int64_t first_grant_wait_ns = 20'000'000;
  PacingMode pacing = PacingMode::kAuto;
  SecurityConfig security;
  PeerLimits limits;
  EndpointLimits endpoint_limits;
  EnforcementConfig enforcement;
  ShortfallResponse shortfall_response;
  DataReuse data_reuse;
  // Unpaced sending to a receiver whose bottleneck someone else fills.
  ContentionFallback contention_fallback;
  // This sender's own uplink, shared among the receivers that grant it.
  UplinkSharing uplink;
  // Scheduler settings for real hosts; downlink_bps overrides its link rate.
  core::ReceiverConfig scheduler = default_scheduler_config();
  // Serves the Prometheus counters (docs/runtime.md, "Metrics") on this
  // address (port 0: any free one); none when unset. Meant for a local port.
  std::optional<PeerAddress> metrics_listen;
  // Logged reasons (connection closed, peer demoted, ...). Default: stderr.
  std::function<void(std::string_view)> log;

  static core::ReceiverConfig default_scheduler_config();
};

}  // namespace safs::runtime
