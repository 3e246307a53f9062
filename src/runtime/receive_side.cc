#include "runtime/receive_side.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "runtime/clock.h"
#include "runtime/pacer.h"
#include "runtime/urgent_quota.h"

namespace safs::runtime {
namespace {

constexpr std::size_t kMaxReadPerEventBytes = 4 << 20;  // then let other sockets run
// Slack beyond this (about 11 days) is treated as no deadline; it also keeps
// the clock arithmetic far from overflow whatever a peer sends.
constexpr std::int64_t kMaxSlackNs = 1'000'000 * kNsPerSecond;

// A flow's first grant takes a control delay to reach its sender and its
// TCP window a few RTTs to open (slow start after the unscheduled bytes and
// the first-grant wait); its first 20 ms say little about the capacity.
constexpr std::int64_t kGrantSettleNs = 20 * kNsPerMs;

}  // namespace

ReceiveSide::ReceiveSide(EventLoop& loop, const EndpointConfig& config, PeerTable& peers,
                         Acceptor& acceptor, CompletionSignal& completions)
    : loop_(loop),
      config_(config),
      peers_(peers),
      acceptor_(acceptor),
      scheduler_(config.scheduler),
      shortfall_(config.scheduler.allocator.link_bps, config.shortfall_response.estimator),
      min_budget_bps_(shortfall_.budget_bps()),
      posted_(completions),
      unexpected_(config.endpoint_limits) {}

ReceiveSide::~ReceiveSide() {
  for (auto& [id, flow] : incoming_) {
    if (flow.fd >= 0) close(flow.fd);
  }
}

// ---- from the sender ----

void ReceiveSide::tell_sender(Peer& peer, std::uint64_t flow, wire::ErrorCode code,
                              const std::string& reason) {
  wire::Error error;
  error.flow = flow;
  error.from_receiver = 1;
  error.code = code;
  error.reason = reason;
  peers_.send(peer, error);
}

void ReceiveSide::on_announce(Peer& peer, const wire::Announce& announce) {
  auto refuse = [&](wire::ErrorCode code, const std::string& reason) {
    config_.log("refusing flow " + std::to_string(announce.flow) + " from " + peer.name + ": " +
                reason);
    ++stats_.refused_flows;
    tell_sender(peer, announce.flow, code, reason);
  };
  if (announce.flow == 0) return refuse(wire::ErrorCode::kMalformed, "flow id 0");
  // Flow ids only grow on a connection: a duplicate or replayed announce
  // (even of a flow that finished) is refused.
  if (announce.flow <= peer.highest_flow) {
    return refuse(wire::ErrorCode::kMalformed, "flow " + std::to_string(announce.flow) +
                                                   " announced before (duplicate or replay)");
  }
  peer.highest_flow = announce.flow;
  const ReceiveHandle posted = posted_.match(announce.tag, announce.size_bytes, peer.name);
  if (const auto refusal = peers_.refusal(peer, announce.size_bytes, posted == 0)) {
    return refuse(refusal->code, refusal->reason);
  }
  const bool unexpected = posted == 0 && !message_handler_;
  if (unexpected) {
    if (const auto full = unexpected_.reserve(announce.size_bytes)) {
      return refuse(wire::ErrorCode::kMemoryLimit, *full);
    }
  }
  const std::int64_t now = monotonic_ns();
  const core::FlowId id = next_incoming_++;
  IncomingFlow& flow =
      incoming_.emplace(id, IncomingFlow{.overrun = OverrunDetector(config_.enforcement)})
          .first->second;
  flow.id = id;
  flow.peer = peer.id;
  flow.announce = announce;
  flow.announce.urgent = announce.urgent != 0 ? 1 : 0;  // whether on its plan: match_plan
  flow.last_bytes_ns = now;
  flow.unexpected = unexpected;
  if (posted != 0) {
    flow.posted = posted;
    flow.target = posted_.claim(posted, peer.name, announce.size_bytes);
  } else {
    // Not value-initialised: pages are touched as bytes land, not all at once.
    flow.owned.reset(new (std::nothrow) std::byte[announce.size_bytes]);
    if (!flow.owned) {
      if (unexpected) unexpected_.unreserve(announce.size_bytes);
      incoming_.erase(id);
      return refuse(wire::ErrorCode::kMemoryLimit,
                    "cannot allocate " + std::to_string(announce.size_bytes) + " bytes");
    }
    flow.owned_bytes = announce.size_bytes;
    flow.target = std::span(flow.owned.get(), announce.size_bytes);
  }
  peers_.charge(peer, flow.owned_bytes);
  if (announce.urgent != 0) ++peers_.standing(peer).urgent_claims;
  if (peer.demoted) {  // its standing follows it to new flows: held from the start
    flow.throttled = true;
    flow.read_bucket.set_rate(0, now);
  }
  incoming_by_remote_[{peer.id, announce.flow}] = id;
  flow.deadline_ns = deadline_for(announce.slack_ns, peer, now);
  const core::SemanticFlow semantic = semantic_flow(flow, peer);
  const bool missed_plan =
      match_plan(peer, flow, semantic.urgent(), announce.urgent == wire::kUrgentOnPlan, now);
  scheduler_.add_flow(semantic);  // an urgent one takes its plan's place, if any
  // Counted after the flow is in: a demotion it causes holds the flow too.
  if (missed_plan) plan_missed(peer, /*count_claim=*/announce.urgent == 0, now);
  bind_parked(peer);
}

void ReceiveSide::on_update(const Peer& peer, const wire::Update& update) {
  const auto it = incoming_by_remote_.find({peer.id, update.flow});
  if (it == incoming_by_remote_.end()) return;  // finished meanwhile
  IncomingFlow& flow = incoming_.at(it->second);
  flow.announce.urgent = update.urgent;
  flow.announce.criticality = update.criticality;
  flow.announce.group = update.group;
  flow.announce.slack_ns = update.slack_ns;
  flow.deadline_ns = std::min(deadline_for(update.slack_ns, peer, monotonic_ns()),
                              flow.waited_since_ns);  // a waiting consumer outranks any estimate
  reschedule(flow, peer);
}

void ReceiveSide::on_report(const Peer& peer, const wire::Report& report) {
  const auto it = incoming_by_remote_.find({peer.id, report.flow});
  if (it == incoming_by_remote_.end()) return;  // finished meanwhile
  IncomingFlow& flow = incoming_.at(it->second);
  ++stats_.uplink_reports_received;
  const double cap_bps = report.rate_bps == wire::kNoUplinkLimit
                             ? core::kNoUplinkLimit
                             : static_cast<double>(report.rate_bps);
  if (cap_bps == flow.sender_cap_bps) return;
  flow.sender_cap_bps = cap_bps;
  reschedule(flow, peer);
}

// The sender's deadline is an estimate; a blocked consumer is a fact, and
// every moment from now on is a bubble. The allocation is redone at the
// next tick, as after an update.
bool ReceiveSide::consumer_waits(ReceiveHandle receive) {
  const std::int64_t now_ns = monotonic_ns();
  for (auto& [id, flow] : incoming_) {
    if (flow.posted != receive) continue;
    if (flow.announce.urgent == 0 || flow.deadline_ns <= now_ns) return false;
    flow.waited_since_ns = flow.deadline_ns = now_ns;
    ++stats_.consumer_waits;
    reschedule(flow, peers_.at(flow.peer));
    return true;
  }
  return false;
}

void ReceiveSide::on_aborted(const Peer& peer, const wire::Error& error) {
  const auto it = incoming_by_remote_.find({peer.id, error.flow});
  if (it != incoming_by_remote_.end()) {
    drop_counting_claim(incoming_.at(it->second), "sender aborted: " + error.reason,
                        monotonic_ns());
  }
}

void ReceiveSide::drop_flows_from(PeerId peer, const std::string& reason) {
  std::vector<core::FlowId> dropped;
  for (const auto& [id, flow] : incoming_) {
    if (flow.peer == peer) dropped.push_back(id);
  }
  // Its standing outlives the connection: unkept claims still count.
  for (core::FlowId id : dropped) drop_counting_claim(incoming_.at(id), reason, monotonic_ns());
  forget_plans_from(peer);
}

// ---- data connections ----

void ReceiveSide::bind_data(UnboundConnection& connection) {
  const wire::DataOpen& open = *connection.data_open;
  auto reject = [&](const std::string& reason) {
    config_.log("closing data connection from " + remote_host(connection.fd) + ": " + reason);
    loop_.remove_and_close(connection.fd);
  };
  const Peer* peer = peers_.find_by_connection(open.connection);
  if (peer == nullptr) {
    // Came before its control connection authenticated: park it, unread.
    acceptor_.park(connection);
    return;
  }
  // Only the authenticated peer's own data connections carry its token.
  if (!peer->control->crypto()->verify_peer_flow_token(open.flow, open.size_bytes, open.token)) {
    peers_.count_authentication_failure();
    return reject("its flow token does not authenticate");
  }
  const auto known = incoming_by_remote_.find({peer->id, open.flow});
  if (known == incoming_by_remote_.end()) {
    if (open.flow <= peer->highest_flow)
      return reject("its flow is over (a replayed data connection)");
    acceptor_.park(connection);  // before its flow's announce
    return;
  }
  IncomingFlow& flow = incoming_.at(known->second);
  if (flow.fd >= 0) return reject("a second data connection for one flow");
  if (open.size_bytes != flow.announce.size_bytes) {
    reject("its size differs from the announce");
    drop(flow, "data connection size differs from the announce");
    return;
  }
  flow.fd = connection.fd;
  const core::FlowId id = flow.id;
  loop_.remove(flow.fd);
  loop_.add(flow.fd, EPOLLIN, [this, id](std::uint32_t) { on_data_event(id); });
  // Payload that arrived with the data-open frame.
  const std::uint64_t early = connection.bytes.size();
  if (early > flow.target.size()) {
    drop(flow, "more bytes than announced");
    return;
  }
  std::memcpy(flow.target.data(), connection.bytes.data(), early);
  flow.received_bytes = early;
  flow.overrun.on_bytes(early);
  stats_.data_bytes_received += early;
  if (flow.received_bytes == flow.target.size()) {
    complete(flow);
  } else {
    read_data(flow, monotonic_ns());
  }
}

void ReceiveSide::bind_parked(const Peer& peer) {
  if (!peer.authenticated) return;
  std::vector<UnboundConnection> ready =
      acceptor_.take_parked(peer.connection_id, [&](std::uint64_t flow) {
        return incoming_by_remote_.count({peer.id, flow}) != 0;
      });
  for (UnboundConnection& connection : ready) bind_data(connection);
}

void ReceiveSide::on_data_event(core::FlowId id) {
  const auto it = incoming_.find(id);
  if (it != incoming_.end()) read_data(it->second, monotonic_ns());
}

void ReceiveSide::read_data(IncomingFlow& flow, std::int64_t now_ns) {
  std::size_t budget = kMaxReadPerEventBytes;
  while (flow.received_bytes < flow.target.size() && budget > 0) {
    std::uint64_t want = std::min<std::uint64_t>(flow.target.size() - flow.received_bytes, budget);
    if (flow.throttled) {
      want = std::min(want, flow.read_bucket.available(now_ns));
      if (want == 0) {
        // Held to its grant: stop reading, so TCP's window closes on the sender.
        flow.reading = false;
        loop_.modify(flow.fd, 0);
        return;
      }
    }
    const ssize_t n =
        recv(flow.fd, flow.target.data() + flow.received_bytes, static_cast<std::size_t>(want), 0);
    if (n > 0) {
      const auto got = static_cast<std::uint64_t>(n);
      flow.received_bytes += got;
      flow.last_bytes_ns = now_ns;
      if (flow.ghost) {  // it sends after all: back in the scheduler
        flow.ghost = false;
        reschedule(flow, peers_.at(flow.peer));
      }
      budget -= static_cast<std::size_t>(got);
      stats_.data_bytes_received += got;
      flow.overrun.on_bytes(got);
      downlink_meter(peers_.at(flow.peer), now_ns).on_bytes(got);
      if (flow.throttled) flow.read_bucket.consume(got);
      if (!flow.granted && !flow.on_plan) scheduler_.note_unscheduled(got, to_core_ps(now_ns));
      continue;
    }
    if (n == 0) {
      drop(flow, "sender closed the data connection after " + std::to_string(flow.received_bytes) +
                     " of " + std::to_string(flow.target.size()) + " bytes");
      return;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    if (errno == EINTR) continue;
    drop(flow, std::string("data connection: ") + std::strerror(errno));
    return;
  }
  scheduler_.update_remaining(flow.id, flow.target.size() - flow.received_bytes);
  if (flow.received_bytes == flow.target.size()) complete(flow);
}

// ---- the end of a flow ----

void ReceiveSide::complete(IncomingFlow& flow) {
  const core::FlowId id = flow.id;
  Peer& peer = peers_.at(flow.peer);
  // Kept for the sender's next DataOpen (which may be there already: a flow
  // that follows on it, wire::kCapDataFollow), or closed before the Done
  // goes, so that a sender reusing it most likely sees the close first.
  if (config_.data_reuse.enabled && acceptor_.keep(flow.fd, peer.connection_id)) {
    flow.fd = -1;
  } else {
    loop_.remove_and_close(flow.fd);
  }
  peers_.send(peer, wire::Done{flow.announce.flow, flow.announce.size_bytes});
  ++stats_.incoming_completed;
  const std::int64_t now_ns = monotonic_ns();
  if (flow.deadline_ns != kNoDeadlineNs) count_lateness(now_ns - flow.deadline_ns);
  // A planned flow's warning is judged at its last byte, here: the handlers
  // below may close the peer, which forgets the flow without judging it.
  scheduler_.complete_flow(id, to_core_ps(now_ns));
  if (flow.posted != 0) {
    posted_.complete(flow.posted, flow.announce.size_bytes);
  } else {
    deliver_unposted(flow, peer);
  }
  // The handler may have closed the peer, and with it this flow.
  const auto it = incoming_.find(id);
  if (it != incoming_.end()) forget(it->second);
}

// Counted after the drop: a demotion it causes acts on the peer's other
// flows, not on this one.
void ReceiveSide::drop_counting_claim(IncomingFlow& flow, const std::string& reason,
                                      std::int64_t now_ns) {
  const PeerId peer = flow.peer;
  const bool unkept = flow.ghost && flow.announce.urgent != 0;
  drop(flow, reason);
  if (!unkept) return;
  if (Peer* found = peers_.find(peer)) missed_claim(*found, now_ns);
}

void ReceiveSide::drop(IncomingFlow& flow, const std::string& reason) {
  config_.log("dropping incoming flow " + std::to_string(flow.announce.flow) + " from peer " +
              std::to_string(flow.peer) + ": " + reason);
  loop_.remove_and_close(flow.fd);
  ++stats_.incoming_failed;
  if (flow.posted != 0) posted_.fail(flow.posted, reason);
  forget(flow);
}

void ReceiveSide::forget(IncomingFlow& flow) {
  if (flow.unexpected) unexpected_.unreserve(flow.announce.size_bytes);
  peers_.refund(flow.peer, flow.owned_bytes);
  scheduler_.remove_flow(flow.id);
  incoming_by_remote_.erase({flow.peer, flow.announce.flow});
  incoming_.erase(flow.id);
}

// ---- the scheduler, its grants and their enforcement ----

std::int64_t ReceiveSide::deadline_for(std::int64_t slack_ns, const Peer& peer,
                                       std::int64_t now_ns) const {
  if (slack_ns == wire::kNoDeadline || slack_ns >= kMaxSlackNs) return kNoDeadlineNs;
  // The sender's slack was measured when it sent; half an RTT has passed since.
  return now_ns + std::max(slack_ns, -kMaxSlackNs) - peer.rtt_ns / 2;
}

void ReceiveSide::reschedule(const IncomingFlow& flow, const Peer& peer) {
  if (!flow.ghost) scheduler_.add_flow(semantic_flow(flow, peer));
}

core::SemanticFlow ReceiveSide::semantic_flow(const IncomingFlow& flow, const Peer& peer) const {
  core::SemanticFlow semantic;
  semantic.id = flow.id;
  semantic.sender = static_cast<std::uint32_t>(peer.id);
  semantic.size_bytes = flow.announce.size_bytes;
  semantic.remaining_bytes = flow.announce.size_bytes - flow.received_bytes;
  semantic.dependency = flow.announce.group;
  const bool held = peer.demoted || flow.over_quota;
  const bool urgent = flow.announce.urgent != 0 && !held;
  semantic.urgency = urgent ? core::Urgency::kUrgent : core::Urgency::kBackground;
  semantic.criticality = held ? 0 : flow.announce.criticality;
  if (flow.deadline_ns != kNoDeadlineNs) semantic.no_bubble_ps = to_core_ps(flow.deadline_ns);
  semantic.sender_cap_bps = flow.sender_cap_bps;
  return semantic;
}

wire::Grant ReceiveSide::wire_grant(const core::Grant& grant, std::uint64_t flow) {
  wire::Grant message;
  message.flow = flow;
  message.rate_bps = static_cast<std::uint64_t>(std::llround(grant.rate_bps));
  message.epoch = grant.epoch;
  message.lease_ns = static_cast<std::uint64_t>(from_core_ps(grant.valid_for_ps));
  message.byte_cap = grant.byte_cap;
  message.priority = grant.priority;
  return message;
}

void ReceiveSide::send_grants(const std::vector<core::Grant>& grants, std::int64_t now_ns) {
  for (const core::Grant& grant : grants) {
    if (core::is_planned(grant.flow)) {
      send_planned_grant(grant);
      continue;
    }
    const auto it = incoming_.find(grant.flow);
    if (it == incoming_.end()) continue;
    IncomingFlow& flow = it->second;
    Peer* peer = peers_.find(flow.peer);
    if (peer == nullptr) continue;
    peers_.send(*peer, wire_grant(grant, flow.announce.flow));
    ++stats_.grants_sent;
    // Bytes are expected from the moment a rate is granted, not before.
    if (!flow.granted || flow.granted_bps <= 0) flow.last_bytes_ns = now_ns;
    if (!flow.granted) flow.first_grant_ns = now_ns;
    flow.granted = true;
    flow.granted_bps = grant.rate_bps;
    flow.overrun.on_grant(grant.rate_bps, now_ns);
    if (flow.throttled) flow.read_bucket.set_rate(grant.rate_bps / 8, now_ns);
  }
}

void ReceiveSide::demote(Peer& peer, std::int64_t now_ns, const std::string& why) {
  peer.demoted = true;
  peers_.standing(peer).demoted_until_ns = now_ns + config_.enforcement.memory_ns;
  ++stats_.demoted_peers;
  const std::string member = peer.identity == peer.name ? "" : " (member " + peer.identity + ")";
  config_.log("peer " + peer.name + member + " " + why +
              ": its flows are demoted to background and its reads held to its grants");
  for (auto& [id, flow] : incoming_) {
    if (flow.peer != peer.id) continue;
    flow.throttled = true;
    flow.read_bucket.set_rate(flow.granted_bps / 8, now_ns);
    reschedule(flow, peer);
  }
  forget_plans_from(peer.id);
}

void ReceiveSide::tick(std::int64_t now_ns) {
  police_idle_flows(now_ns);
  expire_plans(now_ns);
  respond_to_shortfall(now_ns);
  send_grants(scheduler_.poll(to_core_ps(now_ns)), now_ns);
  hold_urgent_quotas();
  std::vector<core::FlowId> resume;
  std::vector<PeerId> metered;  // each sending peer's identity is judged once a tick
  for (auto& [id, flow] : incoming_) {
    Peer& peer = peers_.at(flow.peer);
    if (flow.overrun.tick(now_ns) && !peer.demoted) {
      demote(peer, now_ns, "sends well above its grants");
    }
    if (std::find(metered.begin(), metered.end(), peer.id) == metered.end()) {
      metered.push_back(peer.id);
      if (downlink_meter(peer, now_ns).tick(now_ns) && !peer.demoted) {
        demote(peer, now_ns, "sends well above the whole downlink across its flows");
      }
    }
    if (flow.throttled && !flow.reading && flow.fd >= 0 && flow.read_bucket.available(now_ns) > 0) {
      resume.push_back(id);
    }
  }
  for (core::FlowId id : resume) {
    const auto it = incoming_.find(id);
    if (it == incoming_.end()) continue;
    it->second.reading = true;
    loop_.modify(it->second.fd, EPOLLIN);
    read_data(it->second, now_ns);
  }
}

// A flow counts when it could have sent its whole grant this window: granted,
// sending to us (not a ghost, not held back), with more bytes left than its
// grant carries in a window. Others (nearly done, or held) say nothing about
// the capacity; when none counts, the window is not judged.
void ReceiveSide::respond_to_shortfall(std::int64_t now_ns) {
  const ShortfallResponse& response = config_.shortfall_response;
  if (!response.lower_budget && !response.urgent_first) return;
  const double window_s =
      static_cast<double>(response.estimator.window_ps) / static_cast<double>(kPsPerSec);
  std::uint64_t bytes = 0;
  double granted_bps = 0;
  for (auto& [id, flow] : incoming_) {
    const std::uint64_t got = flow.received_bytes - flow.bytes_at_last_tick;
    flow.bytes_at_last_tick = flow.received_bytes;
    if (!flow.granted || flow.granted_bps <= 0 || flow.ghost || flow.throttled || flow.fd < 0 ||
        now_ns - flow.first_grant_ns < kGrantSettleNs) {
      continue;
    }
    const double left_bits = static_cast<double>(flow.target.size() - flow.received_bytes) * 8;
    if (left_bits < flow.granted_bps * window_s) continue;
    bytes += got;
    granted_bps += flow.granted_bps;
  }
  observe_downlink(now_ns);
  const bool budget_moved =
      shortfall_.observe(to_core_ps(now_ns), bytes, granted_bps, granted_bps > 0);
  if (response.lower_budget && budget_moved) {
    ++budget_changes_;
    min_budget_bps_ = std::min(min_budget_bps_, shortfall_.budget_bps());
    scheduler_.set_link_bps(shortfall_.budget_bps());
  }
  if (response.urgent_first) {
    // Short of grants while the downlink is full: someone else's traffic
    // took the difference. With the downlink not full the senders could not
    // go faster, and the whole budget to the earliest would be wasted. Once
    // switched it stays until the flows get their grants (a window of a
    // transfer's start may leave the link less than full): each switch back
    // and forth pauses and resumes flows in mid-flight.
    const bool edf =
        config_.scheduler.allocator.urgent_first ||
        (shortfall_.short_of_grants() && (scheduler_.urgent_first() || shortfall_.link_busy()));
    if (edf != scheduler_.urgent_first()) {
      if (edf) ++stats_.shortfall_episodes;
      scheduler_.set_urgent_first(edf);
    }
  }
}

void ReceiveSide::observe_downlink(std::int64_t now_ns) {
  if (!shortfall_.window_due(to_core_ps(now_ns))) return;  // one read per window
  if (!downlink_interface_.known() && now_ns >= next_interface_lookup_ns_) {
    for (const auto& [id, flow] : incoming_) {
      if (flow.fd < 0) continue;
      // getifaddrs is a netlink dump: after a miss, not again for a second.
      if (!downlink_interface_.find_by_socket(flow.fd))
        next_interface_lookup_ns_ = now_ns + kNsPerSecond;
      break;
    }
  }
  if (const auto total = downlink_interface_.received()) shortfall_.observe_link_total(*total);
}

// A flow owes bytes from its announce (an obedient sender sends its
// unscheduled bytes at once) and whenever it holds a rate; it waits on this
// receiver once it has started and holds no rate, or while its reads are
// held back. One that owes bytes and sends none for the ghost grace is a
// ghost: it leaves the scheduler, so its share goes to flows that send,
// until its bytes come. Quiet for the idle timeout, it is dropped, and only
// then does an urgent ghost's claim count as missed (drop_counting_claim):
// a flow that went quiet (a retransmission timeout behind a full queue
// looks the same at first) and then delivered kept its claim, late.
// Counted when they turned ghost, a stage's in-flight activations going
// quiet together behind a Cubic flow's 300 ms queue demoted an honest
// sender. A flow its sender reported its own uplink holds to a trickle (too
// little for one write quantum within the ghost grace) is silent by its
// sender's account:
// no ghost and no missed claim, waiting as a paused flow does, but dropped
// once held for the sender hold timeout.
void ReceiveSide::police_idle_flows(std::int64_t now_ns) {
  const std::int64_t timeout = config_.limits.idle_flow_timeout_ns;
  const double grace_s = static_cast<double>(config_.limits.ghost_grace_ns) / 1e9;
  std::vector<core::FlowId> idle;
  for (auto& [id, flow] : incoming_) {
    const bool started = flow.received_bytes > 0;
    const bool held_by_sender =
        flow.sender_cap_bps / 8 * grace_s < static_cast<double>(Pacer::kMinWriteBytes);
    if (!held_by_sender) {
      flow.held_by_sender_since_ns = 0;
    } else if (flow.held_by_sender_since_ns == 0) {
      flow.held_by_sender_since_ns = now_ns;
    }
    const bool waits_on_us =
        !flow.reading || held_by_sender || (started && (!flow.granted || flow.granted_bps <= 0));
    if (waits_on_us) flow.last_bytes_ns = now_ns;
    const std::int64_t quiet_ns = now_ns - flow.last_bytes_ns;
    if (!flow.ghost && quiet_ns > config_.limits.ghost_grace_ns) {
      flow.ghost = true;
      ++stats_.ghost_flows;
      scheduler_.set_aside_flow(id);  // judged at its last byte if it comes back
    }
    const bool held_too_long = held_by_sender && now_ns - flow.held_by_sender_since_ns >
                                                     config_.limits.sender_hold_timeout_ns;
    if (quiet_ns > timeout || held_too_long) idle.push_back(id);
  }
  for (core::FlowId id : idle) {
    IncomingFlow& flow = incoming_.at(id);
    const std::string reason =
        (flow.held_by_sender_since_ns != 0
             ? "held by its sender's uplink for " +
                   std::to_string(config_.limits.sender_hold_timeout_ns / kNsPerMs) + " ms"
             : "no data for " + std::to_string(timeout / kNsPerMs) + " ms") +
        " after " + std::to_string(flow.received_bytes) + " of " +
        std::to_string(flow.target.size()) + " bytes";
    tell_sender(peers_.at(flow.peer), flow.announce.flow, wire::ErrorCode::kAborted, reason);
    drop_counting_claim(flow, reason, now_ns);
  }
}

// One flow at a time (the most granted) leaves the urgent class per tick, so
// the share settles within a few reallocations without overshooting. Only
// while the urgent claims compete: while the allocation finds the urgent set
// EDF-feasible, every claimed deadline is met, and one identity's flow served
// above its share (EDF at line rate, `urgent_first`, takes the whole downlink
// for the earliest deadline; just in time tops flows up) costs no other
// identity's claim. Flows already held back stay so while two identities
// claim urgency, so that holding them back, which may make the set feasible,
// does not flap.
void ReceiveSide::hold_urgent_quotas() {
  // Granted to each identity's urgent flows (over all its connections), in
  // the order identities first show urgent work here.
  std::vector<UrgentClaimant> claimants;
  std::vector<double> urgent_bps;
  for (const auto& [id, flow] : incoming_) {
    const Peer& peer = peers_.at(flow.peer);
    if (flow.announce.urgent == 0 || peer.demoted || flow.ghost) continue;
    auto it = std::find_if(claimants.begin(), claimants.end(),
                           [&](const UrgentClaimant& c) { return c.identity == peer.identity; });
    if (it == claimants.end()) {
      claimants.push_back({peer.identity, peer.job});
      urgent_bps.push_back(0);
      it = claimants.end() - 1;
    }
    // An identity over quota still has urgent work (no lapse while it does).
    urgent_bps[static_cast<std::size_t>(it - claimants.begin())] +=
        flow.granted && !flow.over_quota ? flow.granted_bps : 0;
  }
  if (claimants.size() < 2) {  // no contention for urgency: quotas lapse
    for (auto& [id, flow] : incoming_) {
      if (!flow.over_quota) continue;
      flow.over_quota = false;
      reschedule(flow, peers_.at(flow.peer));
    }
    return;
  }
  if (scheduler_.allocation().urgent_feasible) return;
  const std::vector<double> shares =
      urgent_shares(claimants, config_.enforcement, config_.downlink_bps);
  for (std::size_t i = 0; i < claimants.size(); ++i) {
    if (urgent_bps[i] <= shares[i] * config_.enforcement.quota_tolerance) continue;
    IncomingFlow* most = nullptr;
    for (auto& [id, flow] : incoming_) {
      if (peers_.at(flow.peer).identity != claimants[i].identity || flow.announce.urgent == 0 ||
          flow.ghost || flow.over_quota) {
        continue;
      }
      if (most == nullptr || flow.granted_bps > most->granted_bps) most = &flow;
    }
    if (most == nullptr) continue;
    most->over_quota = true;
    ++stats_.quota_demotions;
    reschedule(*most, peers_.at(most->peer));
  }
}

OverrunDetector& ReceiveSide::downlink_meter(const Peer& peer, std::int64_t now_ns) {
  std::optional<OverrunDetector>& meter = peers_.standing(peer).downlink_meter;
  if (!meter) {
    meter.emplace(config_.enforcement);
    meter->on_grant(config_.downlink_bps, now_ns);
  }
  return *meter;
}

void ReceiveSide::count_lateness(std::int64_t lateness_ns) {
  if (lateness_ns > 0) ++stats_.deadline_misses;
  std::size_t bucket = 0;
  while (bucket < kLatenessBoundsNs.size() && lateness_ns > kLatenessBoundsNs[bucket]) ++bucket;
  ++stats_.lateness_buckets[bucket];
}

void ReceiveSide::missed_claim(Peer& peer, std::int64_t now_ns) {
  Standing& standing = peers_.standing(peer);
  ++standing.missed_claims;
  const EnforcementConfig& enforcement = config_.enforcement;
  if (!peer.demoted && standing.urgent_claims >= enforcement.min_claims &&
      standing.missed_claims > enforcement.max_missed_ratio * standing.urgent_claims) {
    demote(peer, now_ns,
           "missed " + std::to_string(standing.missed_claims) + " of " +
               std::to_string(standing.urgent_claims) + " urgent claims");
  }
}

void ReceiveSide::add_stats(EndpointStats& stats) const {
  stats.data_bytes_received += stats_.data_bytes_received;
  stats.grants_sent += stats_.grants_sent;
  stats.incoming_completed += stats_.incoming_completed;
  stats.incoming_failed += stats_.incoming_failed;
  stats.demoted_peers += stats_.demoted_peers;
  stats.ghost_flows += stats_.ghost_flows;
  stats.quota_demotions += stats_.quota_demotions;
  stats.refused_flows += stats_.refused_flows;
  stats.deadline_misses += stats_.deadline_misses;
  stats.consumer_waits += stats_.consumer_waits;
  stats.uplink_reports_received += stats_.uplink_reports_received;
  stats.plans_received += stats_.plans_received;
  stats.plans_infeasible += stats_.plans_infeasible;
  stats.plan_warnings_sent += stats_.plan_warnings_sent;
  stats.plans_unused += stats_.plans_unused;
  const core::AnnouncedOutcomes& planned = scheduler_.announced_outcomes();
  stats.plans_warned_late += planned.warned_late;
  stats.plans_warned_on_time += planned.warned_on_time;
  stats.plans_unwarned_late += planned.unwarned_late;
  stats.plans_unwarned_on_time += planned.unwarned_on_time;
  stats.plans_refused += stats_.plans_refused;
  for (std::size_t i = 0; i < stats.lateness_buckets.size(); ++i) {
    stats.lateness_buckets[i] += stats_.lateness_buckets[i];
  }
  stats.incoming_flows += incoming_.size();
  stats.budget_bps = scheduler_.link_bps();
  stats.min_budget_bps = min_budget_bps_;
  stats.budget_changes += budget_changes_;
  stats.shortfall_episodes += stats_.shortfall_episodes;
  stats.unexpected_messages += unexpected_.held_messages();
  stats.unexpected_bytes += unexpected_.held_bytes();
}

}  // namespace safs::runtime
