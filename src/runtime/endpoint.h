// safs::runtime::Endpoint: SAFS for an AI runtime on real hosts. One endpoint
// sends flows to any number of peers and receives from any number, over
// kernel TCP: one data connection per flow at a time (reused by the next
// flow to the same peer), paced at the rate the receiver grants, and one
// control connection per peer pair (docs/wire.md). The
// receiver's allocation is core::ReceiverScheduler, unchanged.
//
// Threading: an endpoint is driven by one thread at a time (progress(),
// run(), wait()); handlers run on it. post() and stop() are safe from any
// thread. Nothing here starts a thread, and there is no thread per flow.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "runtime/endpoint_config.h"
#include "runtime/socket_ops.h"

namespace safs::runtime {

class EndpointCore;

using FlowHandle = std::uint64_t;  // 0 is never a valid handle
using ReceiveHandle = std::uint64_t;

inline constexpr std::int64_t kNoDeadlineNs = INT64_MAX;

// What the runtime knows of a transfer's urgency. Updated as execution moves.
struct FlowHint {
  // The no-bubble deadline on this host's monotonic clock (monotonic_ns()),
  // kNoDeadlineNs for none. Only the time left travels, so peers' clocks
  // need not agree.
  std::int64_t deadline_ns = kNoDeadlineNs;
  bool urgent = false;            // a computation waits for this transfer
  std::uint32_t criticality = 0;  // higher outranks deadlines under overload
  std::uint64_t group = 0;        // the consumer op: flows it waits for together
  std::uint64_t tag = 0;          // lets the receiver land it in a posted buffer

  // An urgent hint whose deadline is `slack_ns` from now.
  static FlowHint urgent_within(std::int64_t slack_ns, std::uint64_t tag = 0);
  static FlowHint background(std::uint64_t tag = 0);
};

enum class FlowState : std::uint8_t { kPending, kDone, kFailed };

struct FlowStatus {
  FlowState state = FlowState::kFailed;
  std::string error;  // why, when failed
  std::uint64_t sent_bytes = 0;
  double rate_bps = 0;   // the rate the flow is held to now (infinity: unpaced)
  bool granted = false;  // holds a valid lease
};

// The flow is projected to miss its deadline (docs/runtime.md, "Risk").
struct FlowRisk {
  FlowHandle flow = 0;
  std::uint64_t tag = 0;            // its hint's
  std::int64_t reported_at_ns = 0;  // when it was judged at risk (monotonic_ns())
  std::int64_t projected_lateness_ns = 0;
  // The rate projected at: the one it is held to; unpaced, what TCP delivered
  // it lately; paused, the receiver's whole downlink; 0 past its deadline
  // with none of those known.
  double rate_bps = 0;
  double needed_bps = 0;  // what the deadline needs (infinity: past it)
  // A transfer announced ahead (announce_ahead) whose receiver warned that it
  // cannot be on time, reported when the warning comes: usually before any
  // flow of it exists (`flow` 0, `tag` the plan's hint's), else naming the
  // flow that took the plan. No projection (the lateness and rates are 0).
  bool planned = false;
};

struct IncomingMessage {
  std::string peer;    // the sender's address (host:listen port)
  std::string member;  // the member it proved it is (with a roster), else empty
  std::uint64_t tag = 0;
  std::uint64_t group = 0;
  std::span<const std::byte> data;  // valid during the callback only
};

struct ReceiveStatus {
  FlowState state = FlowState::kPending;
  std::string error;
  std::uint64_t bytes = 0;  // landed in the posted buffer
  std::string peer;
};

// Upper bounds of the lateness histogram's buckets (completion minus
// deadline); a last bucket holds the rest.
inline constexpr std::array<std::int64_t, 6> kLatenessBoundsNs = {
    -100'000'000, 0, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000};

struct EndpointStats {
  std::uint64_t control_bytes_sent = 0;
  std::uint64_t control_bytes_received = 0;
  std::uint64_t data_bytes_sent = 0;
  std::uint64_t data_bytes_received = 0;
  std::uint64_t grants_sent = 0;
  std::uint64_t grants_received = 0;
  std::uint64_t protocol_errors = 0;          // connections closed for a bad message
  std::uint64_t authentication_failures = 0;  // wrong proofs, forged frames, bad tokens
  std::uint64_t refused_connections = 0;      // over a cap, or shed when out of fds
  std::uint64_t peers = 0;
  std::uint64_t incoming_flows = 0;         // receiving now
  std::uint64_t incoming_buffer_bytes = 0;  // held for them
  std::uint64_t incoming_completed = 0;
  std::uint64_t incoming_failed = 0;
  std::uint64_t demoted_peers = 0;
  std::uint64_t ghost_flows = 0;      // granted flows that sent nothing, taken off the scheduler
  std::uint64_t quota_demotions = 0;  // urgent flows over their peer's urgent share
  std::uint64_t refused_flows = 0;    // announces refused with an Error
  std::uint64_t deadline_misses = 0;  // incoming flows completed after their deadline
  std::uint64_t consumer_waits = 0;   // incoming flows made due now by consumer_waits()
  // Outgoing urgent flows reported at risk (on_risk), once per episode.
  std::uint64_t risk_reports = 0;
  // Reports that a sender's own uplink limits a flow (EndpointConfig::uplink_bps):
  // sent as a sender, received as a receiver.
  std::uint64_t uplink_reports_sent = 0;
  std::uint64_t uplink_reports_received = 0;
  // Transfers announced ahead (Endpoint::announce_ahead). Sending: plans
  // sent, and flows that started under their planned grant. Receiving:
  // plans taken in; of those, ones warned of (they joined an urgent set
  // that cannot all be on time, or cannot be on time from their own
  // start), and ones that did not serve what they
  // reserved (no flow came, or a background one, or one under half the
  // size); and plans refused (a peer over its limits, demoted, or the
  // scheduler full).
  std::uint64_t plans_sent = 0;
  std::uint64_t flows_on_plans = 0;
  std::uint64_t plans_dropped = 0;  // made before the peer's Hello, which did not read plans
  std::uint64_t plans_received = 0;
  std::uint64_t plans_infeasible = 0;
  std::uint64_t plans_unused = 0;
  // Planned flows that came and ended, by whether their plan was warned of
  // (plans_infeasible) and whether their last byte came after the deadline
  // they were planned with.
  std::uint64_t plans_warned_late = 0;
  std::uint64_t plans_warned_on_time = 0;
  std::uint64_t plans_unwarned_late = 0;
  std::uint64_t plans_unwarned_on_time = 0;
  std::uint64_t plans_refused = 0;
  // Plans warned of, told to their senders (receiving: those that read
  // PlanWarnings), and warnings heard of this endpoint's own plans (sending:
  // each reported as a planned FlowRisk).
  std::uint64_t plan_warnings_sent = 0;
  std::uint64_t plan_warnings_received = 0;
  // The downlink the receiver allocates from (EndpointConfig::shortfall_response):
  // now and its lowest so far, and how often it changed; and how often
  // urgent flows went EDF at line rate because they fell short of grants.
  double budget_bps = 0;
  double min_budget_bps = 0;
  std::uint64_t budget_changes = 0;
  std::uint64_t shortfall_episodes = 0;
  // Held whole for a later post_receive() (no buffer was posted, no handler).
  std::uint64_t unexpected_messages = 0;
  std::uint64_t unexpected_bytes = 0;
  // Sending: data connections opened, and flows that took an idle one
  // instead (EndpointConfig::data_reuse); idle ones kept for peers now.
  std::uint64_t data_connections_opened = 0;
  std::uint64_t data_connections_reused = 0;
  std::uint64_t data_connections_idle = 0;
  // Flows that followed an earlier flow on its connection on a contended
  // path, right behind its last byte (ContentionFallback::one_connection).
  std::uint64_t flows_followed = 0;
  // Times a path to a receiver became contended (EndpointConfig::contention_fallback),
  // and what the paths' granted flows delivered against their grants, per window.
  std::uint64_t contended_paths = 0;
  GrantDelivery grant_delivery;
  // Times a contended path met this host's net.ipv4.tcp_slow_start_after_idle
  // = 1 (logged; at most once per endpoint).
  std::uint64_t idle_restart_warnings = 0;
  // Receiving: finished flows' connections kept open for their sender's next flow.
  std::uint64_t data_connections_kept = 0;
  // Incoming flows with a deadline by lateness (kLatenessBoundsNs, then the rest).
  std::array<std::uint64_t, kLatenessBoundsNs.size() + 1> lateness_buckets{};
};

class Endpoint {
 public:
  explicit Endpoint(EndpointConfig config);
  ~Endpoint();
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;

  // Where peers reach this endpoint.
  PeerAddress address() const;
  // Where the Prometheus counters are served (EndpointConfig::metrics_listen).
  std::optional<PeerAddress> metrics_address() const;

  // Sends `data` (which must stay valid until the flow is done or failed).
  // The first bytes go out at once; the rest at the receiver's grants.
  FlowHandle send(const PeerAddress& peer, std::span<const std::byte> data, const FlowHint& hint);
  // The hint moved (a new deadline, class or group). False for an unknown flow.
  bool update_hint(FlowHandle flow, const FlowHint& hint);
  // Announces an urgent transfer before it exists: `size_bytes` to `peer`,
  // starting at about `start_ns` (monotonic_ns(), at most
  // PeerLimits::max_plan_lead_ns ahead), for the consumer op `hint.group`
  // (non-zero) by `hint.deadline_ns`: what the compute schedule knows. The
  // receiver reserves its rate from a short lead before the start and grants
  // it ahead; the send() to `peer` with the same group, started by half a
  // grant lease (100 ms) less the control RTT after `start_ns`, goes at that
  // grant from its first byte. False, and why in `why_not`, when nothing was announced (not
  // urgent, no group, a start passed or too far ahead, 64 plans pending, a
  // peer known not to read plans; one made before the peer's Hello came is
  // sent once it has, or dropped if the peer does not read plans). A plan
  // nobody sends as planned counts against the sender's standing at its
  // receiver, as an urgent flow that never sends does.
  bool announce_ahead(const PeerAddress& peer, std::uint64_t size_bytes, std::int64_t start_ns,
                      const FlowHint& hint, std::string* why_not = nullptr);
  FlowStatus test(FlowHandle flow) const;
  // Drives the endpoint until the flow is done or failed, or `timeout_ns` passed.
  FlowStatus wait(FlowHandle flow, std::int64_t timeout_ns);
  // Forgets a flow (aborting it if still pending). Finished flows are kept
  // for test() until released.
  void release(FlowHandle flow);
  void on_risk(std::function<void(const FlowRisk&)> handler);

  // Messages nobody posted a buffer for arrive here, whole.
  void on_message(std::function<void(const IncomingMessage&)> handler);
  // The next message with this tag that fits lands in `buffer`; with `from`,
  // only one from that sender (its endpoint's address), so another member
  // of the job cannot land its bytes there. Without a message handler,
  // messages that came before their post are held (EndpointLimits::
  // max_unexpected_*): the oldest one for the tag (and sender) is taken at
  // once, copied in; one larger than `buffer` fails this receive and stays
  // held.
  ReceiveHandle post_receive(std::uint64_t tag, std::span<std::byte> buffer,
                             const std::optional<PeerAddress>& from = std::nullopt);
  ReceiveStatus test_receive(ReceiveHandle receive) const;
  // The computation that posted `receive` is blocked on it now. The flow
  // landing there, if one is under way and urgent, becomes due now: a
  // sender's timestamp is an estimate (it may be late), a waiting consumer
  // is a fact. Call it where the application blocks (the Python module's
  // wait() on a receive does); false when there was nothing to move.
  bool consumer_waits(ReceiveHandle receive);

  // One loop iteration: waits at most `max_wait_ns` for I/O.
  void progress(std::int64_t max_wait_ns);
  // Runs until stop().
  void run();
  void stop();                            // thread-safe
  void post(std::function<void()> task);  // thread-safe: runs on the loop's thread

  EndpointStats stats() const;

  // An eventfd (EFD_NONBLOCK | EFD_CLOEXEC, owned by the endpoint) that
  // becomes readable when a send or a posted receive completes or fails:
  // for an event loop that waits on it beside its own descriptors. Reading
  // its 8-byte counter resets it; test() / test_receive() say which ended.
  int completion_fd() const;

 private:
  std::unique_ptr<EndpointCore> core_;
};

}  // namespace safs::runtime
