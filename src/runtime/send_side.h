// Outgoing flows. A flow's life on the sender:
//   send():   ANNOUNCE on the peer's control connection (size, slack, class,
//             group, tag), and a data connection: an idle one to the peer
//             when the pool has one (data_connection_pool.h), else opened at
//             once; once the peer is authenticated the flow writes DATA-OPEN
//             (with the flow's token), then raw bytes. A reused connection
//             that turns out closed is replaced by a new one, once.
//   pacing:   the first `unscheduled_bytes` go unpaced; then the flow is held
//             to its GRANT's rate while the lease lasts, waits up to
//             `first_grant_wait_ns` for the first grant, and otherwise falls
//             back to a fair share of the receiver's advertised downlink.
//   uplink:   with EndpointConfig::uplink set, granted flows share this
//             endpoint's uplink in deadline order, each held to what the
//             flows before it leave, and a REPORT tells a receiver when
//             that limits its flow (send_side_uplink.cc).
//   plans:    announce_ahead() sends a PLAN before the flow exists; a flow
//             that starts in time under its planned grant skips the
//             unscheduled bytes and the wait (send_side_plans.cc).
//   follow:   on a contended path a flow may instead wait for an earlier
//             flow to the same peer to write its last byte, and then follow
//             it on its connection (send_side_follow.cc).
//   update_hint(): UPDATE with the new slack and class.
//   risk:     each tick projects the finish at the rate the flow can expect
//             (expected_rate_bps); a flow that will miss its deadline is
//             reported once per episode.
//   end:      DONE from the receiver (every byte arrived) completes it and
//             gives its data connection to the pool (when the receiver reuses
//             them; unless a flow that followed it has it already); the
//             receiver's ERROR, a broken data connection or the peer's end
//             fails it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/grant.h"
#include "core/sender_share.h"
#include "core/uplink_report.h"
#include "runtime/completion_signal.h"
#include "runtime/data_connection_pool.h"
#include "runtime/endpoint.h"
#include "runtime/endpoint_config.h"
#include "runtime/event_loop.h"
#include "runtime/pacer.h"
#include "runtime/path_contention.h"
#include "runtime/peer_table.h"
#include "runtime/wire.h"

namespace safs::runtime {

// What TCP delivered for a flow, read from TCP_INFO every tick
// (path_contention.h).
struct FlowProgress {
  bool known = false;  // the kernel says (tcp_progress.h)
  std::int64_t read_ns = 0;
  // Its first window on fd is not judged: a slow start, or a reused
  // connection's stale RTT, is not a competitor.
  std::int64_t judged_from_ns = 0;
  std::uint64_t acked_at_start_bytes = 0;  // acknowledged on fd when the flow took it
  std::uint64_t acked_at_read_bytes = 0;
  std::uint32_t retransmits_at_read = 0;
  GrantReached own;  // whether it delivered its own grant lately
  // What TCP delivered over the last two windows
  // (ContentionFallback::window_ns) in which the flow went unpaced
  // throughout, after the first such window in a row (on a new connection
  // its slow start; the first is skipped on a warm one too): the rate an
  // unpaced flow is judged at for risk. Two, so that one window's stall (a
  // descheduled thread) is not a verdict; nothing in two is no projection.
  std::int64_t window_from_ns = 0;
  std::uint64_t acked_at_window_bytes = 0;
  std::int64_t previous_window_from_ns = 0;
  std::uint64_t acked_at_previous_window_bytes = 0;
  int unpaced_windows = 0;  // whole ones in a row
  bool window_unpaced = false;
  bool delivered_known = false;  // since the flow last went unpaced
  double delivered_bps = 0;
};

struct OutgoingFlow {
  FlowHandle id = 0;
  // Its number on the wire (Announce, DataOpen, the receiver's frames), given
  // when it is announced: a receiver takes a peer's flows in increasing
  // numbers, and a flow that waited to follow another is announced after
  // flows sent later. 0: not announced yet.
  std::uint64_t wire_flow = 0;
  PeerId peer = 0;
  PeerAddress address;
  std::span<const std::byte> data;
  FlowHint hint;
  int fd = -1;
  bool connected = false;
  bool reused_connection = false;  // fd came from the pool (may prove closed: replaced once)
  // Started on a contended path: fd was never kernel-paced and stays so
  // (ContentionFallback::unpaced_connections).
  bool keeps_connection_unpaced = false;
  // Not announced yet: waits to follow an earlier flow on its connection
  // (ContentionFallback::one_connection, send_side_follow.cc).
  bool awaits_connection = false;
  std::vector<std::uint8_t> preamble;  // the DataOpen frame, once the peer is authenticated
  std::size_t preamble_sent = 0;
  std::uint64_t sent_bytes = 0;
  std::unique_ptr<Pacer> pacer;
  core::GrantHolder grant;
  bool on_plan = false;  // `grant` is its plan's, until the receiver grants the flow itself
  std::uint32_t plan_number = 0;  // the plan it took, in time or not (0: none)
  bool plan_warned = false;       // its plan's warning was reported
  std::int64_t started_ns = 0;
  std::int64_t last_written_ns = 0;  // bytes the socket took (a silent receiver takes none)
  bool writable = false;             // EPOLLOUT is wanted
  FlowState state = FlowState::kPending;
  std::string error;
  bool at_risk = false;
  FlowProgress progress;
  // What this endpoint's uplink leaves it after the flows served before it
  // (EndpointConfig::uplink; infinity: not limited), and what its receiver
  // was last told of that.
  double uplink_available_bps = core::kNoUplinkLimit;
  core::UplinkReport report;
};

// A transfer announced ahead (announce_ahead), and its planned grant once
// the receiver sent it.
struct PlannedTransfer {
  std::uint32_t number = 0;
  PeerId peer = 0;
  std::uint64_t size_bytes = 0;
  std::int64_t start_ns = 0;
  FlowHint hint;
  bool sent = false;    // the peer was not authenticated yet: sent once it is
  bool warned = false;  // its receiver said it cannot be on time
  core::GrantHolder grant;
};

// A grant as the core holds it (the lease at most an hour).
core::Grant lease_of(const wire::Grant& grant);
// A deadline as the wire's relative slack (wire::kNoDeadline for none).
std::int64_t slack_for(std::int64_t deadline_ns, std::int64_t now_ns);

class SendSide {
 public:
  // Each flow that completes or fails is signalled on `completions`.
  SendSide(EventLoop& loop, const EndpointConfig& config, PeerTable& peers,
           CompletionSignal& completions);
  ~SendSide();
  SendSide(const SendSide&) = delete;
  SendSide& operator=(const SendSide&) = delete;

  // Endpoint's interface for sending.
  FlowHandle send(const PeerAddress& address, std::span<const std::byte> data,
                  const FlowHint& hint);
  bool update_hint(FlowHandle id, const FlowHint& hint);
  // Endpoint::announce_ahead; false (and why) when nothing was announced.
  bool announce_ahead(const PeerAddress& address, std::uint64_t size_bytes, std::int64_t start_ns,
                      const FlowHint& hint, std::string* why_not);
  FlowStatus test(FlowHandle id) const;
  void release(FlowHandle id);
  void on_risk(std::function<void(const FlowRisk&)> handler) { risk_handler_ = std::move(handler); }

  // From a receiver, on its control connection.
  void on_grant(const Peer& peer, const wire::Grant& grant);
  // The receiver warned that a plan of ours cannot be on time: reported at
  // once, as a planned FlowRisk, once per plan (naming the flow that took
  // the plan, if one did).
  void on_plan_warning(const Peer& peer, const wire::PlanWarning& warning);
  void on_done(const Peer& peer, const wire::Done& done);
  void on_refused(const Peer& peer, const wire::Error& error);
  // The peer proved it holds the job key: its flows' data connections may
  // name their flows (each DataOpen carries a token of this session).
  void on_peer_authenticated(Peer& peer);
  // The peer is gone: its flows fail with `reason`.
  void fail_flows_to(PeerId peer, const std::string& reason);

  // Pacing wake-ups, lease expiry and risk.
  void tick(std::int64_t now_ns);
  bool has_pending() const;
  void add_stats(EndpointStats& stats) const;

 private:
  // Announces the flow and gives it a data connection: an idle one from the
  // pool when the peer reuses them, else a new one; or leaves it waiting to
  // follow an earlier flow (send_side_follow.cc).
  void start_flow(OutgoingFlow& flow, Peer& peer, std::int64_t now_ns);
  void open_data_connection(OutgoingFlow& flow);
  void attach_data_connection(OutgoingFlow& flow, const DataConnectionPool::Connection& connection,
                              bool connected);
  // A reused connection broke: the flow starts over on a new one (false when
  // the flow's connection was not a reused one: the failure is real).
  bool replace_reused_connection(OutgoingFlow& flow, const std::string& why);
  bool peer_reuses_connections(PeerId peer) const;
  void write_preamble(OutgoingFlow& flow, const Peer& peer);
  void want_writable(OutgoingFlow& flow, bool want);
  void on_data_event(FlowHandle id, std::uint32_t events);
  void pump(OutgoingFlow& flow, std::int64_t now_ns);
  // One send() on the data connection: the bytes written, 0 when the socket
  // is full, -1 when it failed (and with it the flow).
  ssize_t write_some(OutgoingFlow& flow, const void* bytes, std::size_t size);
  // The rate the flow's grant (or, without one, its fallback share) allows.
  double granted_rate_bps(const OutgoingFlow& flow, std::int64_t now_ns) const;
  // The rate its pacer is set to: the granted rate, or unpaced on a
  // contended path (path_contention.h).
  double target_rate_bps(const OutgoingFlow& flow, double granted_bps, bool contended,
                         std::int64_t now_ns) const;
  // The downlink the receiver announced; unpaced if it did not.
  double downlink_bps(PeerId peer) const;
  bool path_contended(PeerId peer, std::int64_t now_ns) const;
  // Feeds each path's PathContention, and each flow's own half window, with
  // what its granted flows were allowed and TCP delivered since the last tick.
  void measure_paths(std::int64_t now_ns);
  void start_progress(OutgoingFlow& flow);
  // FlowProgress::delivered_bps, from the flow's acknowledged bytes now.
  void measure_unpaced_delivery(OutgoingFlow& flow, std::uint64_t acked_bytes, std::int64_t now_ns);
  void apply_rate(OutgoingFlow& flow, std::int64_t now_ns);
  void check_risk(OutgoingFlow& flow, std::int64_t now_ns);
  // The rate a flow's finish is projected at: the rate it is held to; unpaced,
  // what TCP delivered it over its last two windows (FlowProgress), or before
  // it has those what the path's last unpaced flow got (PathContention); paused
  // (held to 0 while its receiver serves flows due before it, or waiting to
  // follow another flow), at best its receiver's whole downlink from now on,
  // within this endpoint's uplink when told it. 0: no projection (nothing
  // measured yet, or nothing delivered in two windows; no downlink known).
  double expected_rate_bps(const OutgoingFlow& flow, std::int64_t now_ns) const;
  // Bytes the receiver has yet to get as far as this sender knows: what TCP
  // has not acknowledged (written bytes in flight or queued are not there
  // yet), or without TCP_INFO what is not written.
  std::uint64_t undelivered_bytes(const OutgoingFlow& flow) const;
  // Shares the uplink among the granted flows and sends the reports due
  // (send_side_uplink.cc); nothing without EndpointConfig::uplink.
  void rebalance_uplink(std::int64_t now_ns);
  void send_report(OutgoingFlow& flow, double rate_bps, std::int64_t now_ns);
  void fail_if_peer_silent(OutgoingFlow& flow, std::int64_t now_ns);
  void warn_of_idle_restart(const OutgoingFlow& flow);
  // Following on one connection (send_side_follow.cc).
  // Whether `flow` may follow another on its connection at all: on a
  // contended path, unpaced, not on a plan.
  bool may_follow(const OutgoingFlow& flow, std::int64_t now_ns) const;
  // A flow to `flow`'s peer that has written all its bytes on an unpaced
  // connection and awaits its DONE, if any.
  OutgoingFlow* written_out_before(const OutgoingFlow& flow);
  // Whether `flow`, about to start, waits for an earlier flow to the same
  // peer that is still writing on an unpaced connection and due no later.
  bool waits_to_follow(const OutgoingFlow& flow, std::int64_t now_ns) const;
  // `from` wrote its last byte: `to` is announced and writes on its connection.
  void hand_connection(OutgoingFlow& from, OutgoingFlow& to, Peer& peer, std::int64_t now_ns);
  // `flow` wrote its last byte: its connection goes on to the flow waiting
  // for it that is due first, if any (`flow` then awaits its DONE without one).
  void pass_connection_on(OutgoingFlow& flow, std::int64_t now_ns);
  // Waiting flows with nothing left to follow (the path is no longer
  // contended, or the flow before them failed) start on their own.
  void start_flows_left_waiting(std::int64_t now_ns);
  // Plans (send_side_plans.cc).
  // How long after its start the plan's receiver keeps it: its planned
  // grant's lease, or this endpoint's own before that came.
  std::int64_t lease_ns(const PlannedTransfer& plan) const;
  void send_plan(PlannedTransfer& plan, Peer& peer, std::int64_t now_ns);
  void send_waiting_plans(Peer& peer, std::int64_t now_ns);
  void on_planned_grant(const Peer& peer, const wire::Grant& grant);
  void expire_plans(std::int64_t now_ns);
  // A new flow takes the grant planned for it, if it came and is in time.
  void take_plan(OutgoingFlow& flow, std::int64_t now_ns);
  wire::Announce announce_for(const OutgoingFlow& flow, std::int64_t now_ns) const;
  // Numbers the flow for the wire and sends its Announce.
  void announce(OutgoingFlow& flow, Peer& peer, std::int64_t now_ns);
  // The peer's flow with this wire number, if it is still held.
  OutgoingFlow* find_wire_flow(const Peer& peer, std::uint64_t wire_flow);
  // Done or failed (a pending flow only): closes the data connection, or
  // gives it to the pool when the flow is done and the peer reuses them.
  void end(OutgoingFlow& flow, FlowState state, const std::string& error);
  void fail(OutgoingFlow& flow, const std::string& reason) {
    end(flow, FlowState::kFailed, reason);
  }

  EventLoop& loop_;
  const EndpointConfig& config_;
  PeerTable& peers_;
  CompletionSignal& completions_;
  std::function<void(const FlowRisk&)> risk_handler_;
  FlowHandle next_flow_ = 1;
  std::map<FlowHandle, OutgoingFlow> outgoing_;
  std::uint64_t next_wire_flow_ = 1;
  std::map<std::uint64_t, FlowHandle> by_wire_flow_;  // announced flows still in outgoing_
  DataConnectionPool pool_;
  std::map<PeerId, PathContention> paths_;  // a peer's entry goes with the peer
  bool idle_restart_checked_ = false;       // warn_of_idle_restart() ran
  EndpointStats stats_;                     // the fields add_stats() reports
  // Plans not yet taken by a flow, oldest first; at most kMaxPlans (more
  // are refused: one of them may be live).
  static constexpr std::size_t kMaxPlans = 64;
  std::vector<PlannedTransfer> plans_;
  std::uint32_t next_plan_number_ = 1;
  // rebalance_uplink()'s working memory, kept so that it allocates nothing per call.
  std::vector<OutgoingFlow*> uplink_flows_;
  std::vector<core::SenderFlow> uplink_sender_flows_;
  std::vector<std::size_t> uplink_order_;
  std::vector<double> uplink_available_bps_;
  std::vector<TimePs> uplink_waits_ps_;
};

}  // namespace safs::runtime
