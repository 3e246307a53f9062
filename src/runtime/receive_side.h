// Incoming flows. A flow's life on the receiver:
//   ANNOUNCE: checked against the peer's limits (refused with an ERROR that
//             names the limit), matched to a posted buffer by tag or given a
//             buffer of its own, and added to core::ReceiverScheduler with
//             its slack less half the control RTT.
//   DATA-OPEN: its data connection binds to it (or waits, parked, for the
//             announce); bytes land in the buffer as they arrive.
//   grants:   each tick polls the scheduler and sends its GRANTs; bytes
//             beyond a grant are counted, and a sender that keeps exceeding
//             its grants is demoted to background and its reads held to them.
//   PLAN:     a transfer announced ahead is planned into the allocation and
//             granted before it starts; its flow's ANNOUNCE takes its place
//             (receive_side_plans.cc).
//   UPDATE:   the scheduler learns the new slack and class.
//   REPORT:   the sender's own uplink limits the flow: the scheduler caps it
//             there and gives the rest to other senders.
//   end:      the last byte sends DONE and delivers the message (into its
//             posted buffer, or whole to the message handler); the sender's
//             ERROR, a broken data connection, no bytes for the idle
//             timeout (ERROR to the sender) or the peer's end drops it.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/downlink_estimator.h"
#include "core/receiver_scheduler.h"
#include "core/uplink_report.h"
#include "runtime/acceptor.h"
#include "runtime/endpoint.h"
#include "runtime/endpoint_config.h"
#include "runtime/event_loop.h"
#include "runtime/interface_bytes.h"
#include "runtime/overrun_detector.h"
#include "runtime/peer_table.h"
#include "runtime/posted_receives.h"
#include "runtime/token_bucket.h"
#include "runtime/unexpected_messages.h"
#include "runtime/wire.h"

namespace safs::runtime {

struct IncomingFlow {
  core::FlowId id = 0;  // the scheduler's id (this endpoint's numbering)
  PeerId peer = 0;
  wire::Announce announce;
  int fd = -1;
  std::unique_ptr<std::byte[]> owned;  // when no posted buffer took it
  std::uint64_t owned_bytes = 0;
  std::span<std::byte> target;
  ReceiveHandle posted = 0;
  std::uint64_t received_bytes = 0;
  bool granted = false;
  double granted_bps = 0;
  OverrunDetector overrun;
  bool throttled = false;  // reads held to the grant (demoted sender)
  TokenBucket read_bucket;
  bool reading = true;                           // EPOLLIN registered
  std::int64_t last_bytes_ns = 0;                // since when it owes bytes and sent none
  bool ghost = false;                            // granted, sent nothing: out of the scheduler
  bool over_quota = false;                       // its peer's urgent share was used up: background
  std::int64_t deadline_ns = kNoDeadlineNs;      // its no-bubble deadline on this host's clock
  std::int64_t waited_since_ns = kNoDeadlineNs;  // its consumer waits for it (consumer_waits)
  std::uint64_t bytes_at_last_tick = 0;          // received_bytes then: the budget's measure
  std::int64_t first_grant_ns = 0;               // when it was first granted a rate
  // What its sender's uplink can give it (its Report; infinity: no limit),
  // and since when that has been a trickle (0: it is not).
  double sender_cap_bps = core::kNoUplinkLimit;
  std::int64_t held_by_sender_since_ns = 0;
  bool unexpected = false;  // no buffer, no handler: room reserved in UnexpectedMessages
  bool on_plan = false;     // started under its Plan's grant: its first bytes are not blind
};

// A peer's transfer announced ahead, until its flow comes or it expires (a
// lease after its start, when the scheduler drops its plan too).
struct PlanRecord {
  PeerId peer = 0;
  std::string identity;  // whose standing it counts against, and whose bound
  std::uint32_t number = 0;
  std::uint64_t group = 0;
  std::uint64_t size_bytes = 0;
  std::int64_t expires_ns = 0;
  double granted_bps = 0;  // its last planned grant (what its flow starts at)
};

class ReceiveSide {
 public:
  ReceiveSide(EventLoop& loop, const EndpointConfig& config, PeerTable& peers, Acceptor& acceptor,
              CompletionSignal& completions);
  ~ReceiveSide();
  ReceiveSide(const ReceiveSide&) = delete;
  ReceiveSide& operator=(const ReceiveSide&) = delete;

  // Endpoint's interface for receiving.
  // Takes a held message or a flow in progress for it at once
  // (receive_side_posts.cc), else waits for the next one announced.
  ReceiveHandle post_receive(std::uint64_t tag, std::span<std::byte> buffer,
                             const std::optional<PeerAddress>& from);
  ReceiveStatus test_receive(ReceiveHandle receive) const { return posted_.status(receive); }
  // The computation that posted `receive` waits for it now. An urgent flow
  // landing there is due now, whatever deadline its sender gave; false when
  // no such flow is under way or it was due already.
  bool consumer_waits(ReceiveHandle receive);
  void on_message(std::function<void(const IncomingMessage&)> handler) {
    message_handler_ = std::move(handler);
  }

  // From a sender, on its control connection.
  void on_announce(Peer& peer, const wire::Announce& announce);
  void on_update(const Peer& peer, const wire::Update& update);
  // The sender's uplink limits the flow (or no longer does): the scheduler
  // caps its rate there and gives the rest to others.
  void on_report(const Peer& peer, const wire::Report& report);
  // A transfer announced ahead: planned in, within the peer's limits.
  void on_plan(Peer& peer, const wire::Plan& plan);
  void on_aborted(const Peer& peer, const wire::Error& error);
  // A data connection whose DataOpen was read.
  void bind_data(UnboundConnection& connection);
  // Binds the peer's parked data connections whose flows are now announced.
  void bind_parked(const Peer& peer);
  // The peer is gone: its flows are dropped with `reason`.
  void drop_flows_from(PeerId peer, const std::string& reason);

  // Grants, enforcement and resumed reads.
  void tick(std::int64_t now_ns);
  bool active() const { return !incoming_.empty() || !plans_.empty(); }
  void add_stats(EndpointStats& stats) const;

 private:
  void on_data_event(core::FlowId id);
  void read_data(IncomingFlow& flow, std::int64_t now_ns);
  void complete(IncomingFlow& flow);
  // A whole flow no posted buffer took: to the handler, else held.
  void deliver_unposted(IncomingFlow& flow, const Peer& peer);
  // A late post takes the oldest flow in progress for it: true if one was found.
  bool attach_in_progress(ReceiveHandle receive, std::uint64_t tag, std::span<std::byte> buffer,
                          const std::string& from);
  void drop(IncomingFlow& flow, const std::string& reason);
  // drop(), and an urgent ghost's claim, ending without its bytes, counts
  // as missed (dropped for silence, aborted, or cut off with its peer).
  void drop_counting_claim(IncomingFlow& flow, const std::string& reason, std::int64_t now_ns);
  void forget(IncomingFlow& flow);
  // Demotes the peer's flows and its identity's standing, saying why.
  void demote(Peer& peer, std::int64_t now_ns, const std::string& why);
  // The meter of the peer's identity: all its bytes against the downlink.
  OverrunDetector& downlink_meter(const Peer& peer, std::int64_t now_ns);
  // An urgent claim of the peer was not kept: its standing drops.
  void missed_claim(Peer& peer, std::int64_t now_ns);
  void police_idle_flows(std::int64_t now_ns);
  // An Error about one of the peer's flows (refused, aborted).
  void tell_sender(Peer& peer, std::uint64_t flow, wire::ErrorCode code, const std::string& reason);
  core::SemanticFlow semantic_flow(const IncomingFlow& flow, const Peer& peer) const;
  // The deadline a relative slack from the peer names, on this host's clock.
  std::int64_t deadline_for(std::int64_t slack_ns, const Peer& peer, std::int64_t now_ns) const;
  // Tells the scheduler what changed about a flow (not while it is a ghost).
  void reschedule(const IncomingFlow& flow, const Peer& peer);
  void hold_urgent_quotas();
  void count_lateness(std::int64_t lateness_ns);
  void send_grants(const std::vector<core::Grant>& grants, std::int64_t now_ns);
  // The grant on the wire, naming `flow` (the sender's id, or a plan's).
  static wire::Grant wire_grant(const core::Grant& grant, std::uint64_t flow);
  // Plans (receive_side_plans.cc). match_plan: the peer's flow came
  // (`urgent` as it will be scheduled, `sent_on_plan` as its sender said);
  // true when it is not what its plan reserved for. plan_missed counts that
  // against the peer (and as a claim of its own unless the flow was one).
  bool match_plan(Peer& peer, IncomingFlow& flow, bool urgent, bool sent_on_plan,
                  std::int64_t now_ns);
  void plan_missed(Peer& peer, bool count_claim, std::int64_t now_ns);
  void expire_plans(std::int64_t now_ns);
  void forget_plans_from(PeerId peer);
  void send_planned_grant(const core::Grant& grant);
  // EndpointConfig::shortfall_response: feeds the tick's bytes and grants to
  // the estimator, and its budget or its verdict to the scheduler.
  void respond_to_shortfall(std::int64_t now_ns);
  // Gives the estimator the downlink interface's received bytes when one of
  // its windows ends.
  void observe_downlink(std::int64_t now_ns);

  EventLoop& loop_;
  const EndpointConfig& config_;
  PeerTable& peers_;
  Acceptor& acceptor_;
  std::function<void(const IncomingMessage&)> message_handler_;
  core::ReceiverScheduler scheduler_;
  core::DownlinkEstimator shortfall_;
  // The downlink's own counter, for the estimator's link_busy(): the
  // interface of the first data connection's local address.
  InterfaceBytes downlink_interface_;
  std::int64_t next_interface_lookup_ns_ = 0;
  double min_budget_bps_ = 0;
  std::uint64_t budget_changes_ = 0;
  core::FlowId next_incoming_ = 1;
  std::map<core::FlowId, IncomingFlow> incoming_;
  std::map<std::pair<PeerId, std::uint64_t>, core::FlowId> incoming_by_remote_;
  PostedReceives posted_;
  UnexpectedMessages unexpected_;
  EndpointStats stats_;                // the fields add_stats() reports
  std::vector<PlanRecord> plans_;      // arrival order
  std::int64_t next_plan_log_ns_ = 0;  // refused plans are logged at most once a second
};

}  // namespace safs::runtime
