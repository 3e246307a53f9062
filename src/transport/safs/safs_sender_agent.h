// SAFS at one host as a sender: the send gate (unscheduled bytes first, then
// the granted rate, then the window alone), the grants its flows hold, its
// uplink's share among them, reported to each receiver that asks for more
// than the uplink can give, and the blind caps it learned from losses. It
// handles GRANT.
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <vector>

#include "core/blind_budget.h"
#include "core/grant.h"
#include "core/sender_share.h"
#include "engine/timer.h"
#include "transport/safs/safs_header.h"
#include "transport/safs/safs_transport.h"

namespace safs {

class SafsTransport::SenderAgent {
 public:
  SenderAgent(SafsTransport& transport, int host)
      : transport_(transport),
        host_(host),
        report_timer_(transport.env().sim, [this] { rebalance_uplink(); }) {}

  void on_start(SenderFlow& flow);
  SendGate gate(SenderFlow& flow);
  void on_segment_sent(SenderFlow& flow, Packet& packet);
  void on_deadline_changed(SenderFlow& flow);
  // A finished flow frees its share of the uplink for the others, and leaves
  // its lease to its stream.
  void on_complete(SenderFlow& flow);
  void on_grant(SenderFlow& flow, const Packet& packet);
  // With announce_ahead: tells the receiver of a transfer the compute
  // schedule will start (unless it will go whole blind), and keeps the grant
  // the receiver plans for it until the transfer starts.
  void announce(const FlowSpec& planned);
  void on_planned_grant(const Packet& packet);
  // Transfers this host started under the grant planned for them.
  std::uint64_t flows_on_plans() const { return flows_on_plans_; }
  // With background_streams: the receiver's grant for all of this host's
  // background flows to it (safs_sender_streams.cc).
  void on_stream_grant(const Packet& packet);
  // The flow is off the uplink list, which names flows by id.
  static bool holds_no_reference(const SenderFlow& flow);

 private:
  struct FlowState;  // a flow's SAFS sender state, in its SenderFlow's extension

  static FlowState& state(const SenderFlow& flow);
  safs_header::Semantics semantics(const SenderFlow& flow, bool unscheduled) const;
  void send_meta(SenderFlow& flow);
  void send_report(SenderFlow& flow, double achievable_bps);
  void rebalance_uplink();
  // The rate a granted flow is paced at: its grant, at most its uplink share
  // (and with rate_within_window, at most its window per smoothed RTT).
  double paced_rate_bps(const SenderFlow& flow, const FlowState& s) const;
  // Bytes a flow may send before any grant: one BDP of its path (a short
  // urgent flow whole), at most the cap learned for its receiver.
  std::uint64_t blind_limit(const FlowSpec& spec, double bdp_bytes, TimePs now) const;
  // The window a flow to `receiver` that goes whole blind starts with, at
  // most: the learned cap under blind_cap_as_window, else no bound.
  std::uint64_t blind_window(int receiver, TimePs now) const;
  // Starts `flow` under the lease its stream's last transfer left, if any is
  // still valid. True if it did.
  bool take_stream_lease(SenderFlow& flow, TimePs now);
  // Forgets the flow's announcement; if the flow needs a grant and the one
  // planned for it is valid, starts it under that. True if it did.
  bool take_planned_grant(SenderFlow& flow, bool needs_grant, TimePs now);
  // Starts `flow` under `grant` (no blind bytes), unless this host's uplink
  // cannot serve it now. True if it did.
  bool start_under(SenderFlow& flow, const core::GrantHolder& grant);

  // Background streams (safs_sender_streams.cc). A background flow that
  // needs grants joins its receiver's stream; one that starts while the
  // stream's grant is valid sends no blind bytes.
  void join_background_stream(SenderFlow& flow, TimePs now);
  void leave_background_stream(const SenderFlow& flow);
  // The send gate of a stream's flow past its blind bytes.
  SendGate stream_gate(const SenderFlow& flow, TimePs now);
  // A scheduled packet of a stream's flow left: the stream's pacer moves.
  void on_stream_sent(const SenderFlow& flow, const Packet& packet, TimePs now);

  SafsTransport& transport_;
  int host_;
  Timer report_timer_;                        // sends reports held back by pace_reports
  std::vector<std::uint32_t> sending_flows_;  // flows with a grant, in the order they got one
  // rebalance_uplink's working memory, kept so that a rebalance (one per
  // grant) allocates nothing.
  std::vector<core::SenderFlow> uplink_flows_;
  std::vector<std::size_t> uplink_order_;
  std::vector<double> uplink_available_bps_;
  std::vector<TimePs> uplink_waits_ps_;
  // Leases left by finished urgent flows, by receiver (few: one per peer).
  struct StreamLease {
    int receiver = 0;
    core::GrantHolder grant;
  };
  std::vector<StreamLease> stream_leases_;
  // Blind caps learned from losses, by receiver host; only receivers where
  // this host lost blind bytes have one (looked up, never iterated).
  std::unordered_map<int, core::BlindBudget> blind_budgets_;
  // Transfers announced and not started yet, with the grant planned for each
  // (once it came), oldest first; at most kMaxAnnounced.
  struct Announced {
    std::uint32_t number = 0;  // this host's, 24 bits
    int receiver = 0;
    std::uint64_t dependency = 0;
    TimePs start_ps = 0;  // projected
    core::GrantHolder grant;
  };
  static constexpr std::size_t kMaxAnnounced = 64;
  std::vector<Announced> announced_;
  std::uint32_t next_announcement_ = 0;
  std::uint64_t flows_on_plans_ = 0;
  // Background streams, by receiver host: one grant and one pacer for the
  // background flows this host sends there that need grants.
  struct BackgroundStream {
    core::GrantHolder grant;
    TimePs next_send_ps = 0;
    std::vector<std::uint32_t> members;  // flow ids, not yet done, in start order
  };
  std::map<int, BackgroundStream> background_streams_;
};

}  // namespace safs
