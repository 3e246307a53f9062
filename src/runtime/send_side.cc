#include "runtime/send_side.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "runtime/clock.h"
#include "runtime/tcp_progress.h"

namespace safs::runtime {
namespace {

constexpr std::size_t kMaxWriteBytes = 1 << 20;  // per send(): keeps the loop responsive
constexpr int kMaxSocketPriority = 6;            // higher needs CAP_NET_ADMIN
constexpr std::uint32_t kDataEvents = EPOLLIN | EPOLLRDHUP;

}  // namespace

std::int64_t slack_for(std::int64_t deadline_ns, std::int64_t now_ns) {
  return deadline_ns == kNoDeadlineNs ? wire::kNoDeadline : deadline_ns - now_ns;
}

SendSide::SendSide(EventLoop& loop, const EndpointConfig& config, PeerTable& peers,
                   CompletionSignal& completions)
    : loop_(loop),
      config_(config),
      peers_(peers),
      completions_(completions),
      pool_(loop, config.data_reuse) {}

SendSide::~SendSide() {
  for (auto& [id, flow] : outgoing_) {
    if (flow.fd >= 0) close(flow.fd);
  }
}

// ---- the caller's interface ----

wire::Announce SendSide::announce_for(const OutgoingFlow& flow, std::int64_t now_ns) const {
  wire::Announce announce;
  announce.flow = flow.wire_flow;
  announce.size_bytes = flow.data.size();
  announce.slack_ns = slack_for(flow.hint.deadline_ns, now_ns);
  announce.urgent = flow.on_plan ? wire::kUrgentOnPlan : flow.hint.urgent ? 1 : 0;
  announce.criticality = flow.hint.criticality;
  announce.group = flow.hint.group;
  announce.tag = flow.hint.tag;
  return announce;
}

void SendSide::announce(OutgoingFlow& flow, Peer& peer, std::int64_t now_ns) {
  // Its wait for a first grant, and its silence, count from now: a flow
  // that waited to follow another is announced later than it was sent.
  flow.started_ns = now_ns;
  flow.last_written_ns = now_ns;
  flow.wire_flow = next_wire_flow_++;
  by_wire_flow_[flow.wire_flow] = flow.id;
  peers_.send(peer, announce_for(flow, now_ns));
}

OutgoingFlow* SendSide::find_wire_flow(const Peer& peer, std::uint64_t wire_flow) {
  const auto number = by_wire_flow_.find(wire_flow);
  if (number == by_wire_flow_.end()) return nullptr;
  OutgoingFlow& flow = outgoing_.at(number->second);
  return flow.peer == peer.id ? &flow : nullptr;
}

FlowHandle SendSide::send(const PeerAddress& address, std::span<const std::byte> data,
                          const FlowHint& hint) {
  const std::int64_t now = monotonic_ns();
  const FlowHandle id = next_flow_++;
  OutgoingFlow& flow = outgoing_[id];
  flow.id = id;
  flow.address = address;
  flow.data = data;
  flow.hint = hint;
  flow.started_ns = now;
  flow.last_written_ns = now;
  std::string error;
  Peer* peer = peers_.connect(address, error);
  if (peer == nullptr) {
    flow.state = FlowState::kFailed;
    flow.error = error;
    completions_.notify();
    return id;
  }
  flow.peer = peer->id;
  take_plan(flow, now);
  start_flow(flow, *peer, now);
  return id;
}

bool SendSide::update_hint(FlowHandle id, const FlowHint& hint) {
  const auto it = outgoing_.find(id);
  if (it == outgoing_.end() || it->second.state != FlowState::kPending) return false;
  OutgoingFlow& flow = it->second;
  flow.hint = hint;
  flow.at_risk = false;
  if (flow.awaits_connection) return true;  // its Announce will say it
  Peer* peer = peers_.find(flow.peer);
  if (peer == nullptr) return false;
  wire::Update update;
  update.flow = flow.wire_flow;
  update.slack_ns = slack_for(hint.deadline_ns, monotonic_ns());
  update.urgent = hint.urgent ? 1 : 0;
  update.criticality = hint.criticality;
  update.group = hint.group;
  peers_.send(*peer, update);
  return true;
}

FlowStatus SendSide::test(FlowHandle id) const {
  FlowStatus status;
  const auto it = outgoing_.find(id);
  if (it == outgoing_.end()) {
    status.error = "unknown flow";
    return status;
  }
  const OutgoingFlow& flow = it->second;
  status.state = flow.state;
  status.error = flow.error;
  status.sent_bytes = flow.sent_bytes;
  status.rate_bps = flow.pacer ? flow.pacer->rate_bps() : 0;
  status.granted = flow.grant.active(to_core_ps(monotonic_ns()));
  return status;
}

void SendSide::release(FlowHandle id) {
  const auto it = outgoing_.find(id);
  if (it == outgoing_.end()) return;
  // A pending flow is aborted: closing its data connection tells the
  // receiver (one that passed its connection on has written all its bytes).
  fail(it->second, "released by the caller");
  by_wire_flow_.erase(it->second.wire_flow);
  outgoing_.erase(it);
}

// ---- the data connection ----

bool SendSide::peer_reuses_connections(PeerId id) const {
  const Peer* peer = peers_.find(id);
  return config_.data_reuse.enabled && peer != nullptr && peer->authenticated &&
         advertises(*peer, wire::kCapDataReuse);
}

void SendSide::start_flow(OutgoingFlow& flow, Peer& peer, std::int64_t now_ns) {
  flow.keeps_connection_unpaced = config_.contention_fallback.unpaced_connections &&
                                  config_.pacing == PacingMode::kAuto &&
                                  path_contended(flow.peer, now_ns);
  const auto want = flow.keeps_connection_unpaced ? DataConnectionPool::Want::kUnpacedOnly
                                                  : DataConnectionPool::Want::kPacedFirst;
  const DataConnectionPool::Connection idle = peer_reuses_connections(flow.peer)
                                                  ? pool_.take(flow.peer, want)
                                                  : DataConnectionPool::Connection{};
  if (idle.fd < 0 && may_follow(flow, now_ns)) {
    if (OutgoingFlow* before = written_out_before(flow); before != nullptr) {
      return hand_connection(*before, flow, peer, now_ns);
    }
    if (waits_to_follow(flow, now_ns)) {
      flow.awaits_connection = true;
      return;
    }
  }
  announce(flow, peer, now_ns);
  if (idle.fd < 0) return open_data_connection(flow);
  ++stats_.data_connections_reused;
  flow.reused_connection = true;
  attach_data_connection(flow, idle, /*connected=*/true);
}

void SendSide::open_data_connection(OutgoingFlow& flow) {
  const int fd = connect_tcp(flow.address);
  if (fd < 0) {
    fail(flow,
         "cannot open a data connection to " + flow.address.text() + ": " + std::strerror(errno));
    return;
  }
  ++stats_.data_connections_opened;
  set_no_delay(fd);  // the last partial segment must not wait for an ACK
  attach_data_connection(flow, {fd, /*kernel_rate_set=*/false}, /*connected=*/false);
}

void SendSide::attach_data_connection(OutgoingFlow& flow,
                                      const DataConnectionPool::Connection& connection,
                                      bool connected) {
  flow.fd = connection.fd;
  flow.connected = connected;
  set_priority(flow.fd, flow.on_plan
                            ? std::min<int>(flow.grant.grant().priority, kMaxSocketPriority)
                            : kUnscheduledPriority);
  // A new Pacer resets a reused connection's rate.
  flow.pacer = std::make_unique<Pacer>(
      flow.fd, flow.keeps_connection_unpaced ? PacingMode::kUserspace : config_.pacing,
      connection.kernel_rate_set);
  start_progress(flow);
  if (const Peer* peer = peers_.find(flow.peer); peer != nullptr && peer->authenticated) {
    write_preamble(flow, *peer);
  }
  flow.writable = true;  // for the connect's completion, or the first write
  const FlowHandle id = flow.id;
  loop_.add(flow.fd, kDataEvents | EPOLLOUT,
            [this, id](std::uint32_t events) { on_data_event(id, events); });
  apply_rate(flow, monotonic_ns());
}

bool SendSide::replace_reused_connection(OutgoingFlow& flow, const std::string& why) {
  if (!flow.reused_connection || flow.state != FlowState::kPending) return false;
  // The receiver's log names the flow by its wire number.
  config_.log("reused data connection to " + flow.address.text() + " " + why + ": flow " +
              std::to_string(flow.wire_flow) + " (handle " + std::to_string(flow.id) +
              ") starts over on a new one");
  loop_.remove_and_close(flow.fd);
  flow.reused_connection = false;
  flow.preamble.clear();
  flow.preamble_sent = 0;
  flow.sent_bytes = 0;
  open_data_connection(flow);
  return true;
}

void SendSide::start_progress(OutgoingFlow& flow) {
  flow.progress = FlowProgress{};
  const auto tcp = tcp_progress(flow.fd);
  if (!tcp) return;
  const std::int64_t now = monotonic_ns();
  FlowProgress& p = flow.progress;
  p.known = true;
  p.read_ns = now;
  p.judged_from_ns = now + config_.contention_fallback.window_ns;
  p.acked_at_start_bytes = tcp->bytes_acked;
  p.acked_at_read_bytes = tcp->bytes_acked;
  p.retransmits_at_read = tcp->retransmits;
  p.own = GrantReached(config_.contention_fallback, now);
  p.window_from_ns = now;
  p.acked_at_window_bytes = tcp->bytes_acked;
  p.window_unpaced = std::isinf(flow.pacer->rate_bps());
}

void SendSide::write_preamble(OutgoingFlow& flow, const Peer& peer) {
  const wire::DataOpen open{
      peer.connection_id, flow.wire_flow, flow.data.size(),
      peer.control->crypto()->own_flow_token(flow.wire_flow, flow.data.size())};
  wire::encode(open, flow.preamble);
}

void SendSide::on_peer_authenticated(Peer& peer) {
  const std::int64_t now = monotonic_ns();
  send_waiting_plans(peer, now);
  for (auto& [id, flow] : outgoing_) {
    if (flow.peer != peer.id || flow.fd < 0 || !flow.preamble.empty()) continue;
    write_preamble(flow, peer);
    want_writable(flow, true);
    pump(flow, now);
  }
}

void SendSide::want_writable(OutgoingFlow& flow, bool want) {
  if (want == flow.writable) return;
  flow.writable = want;
  loop_.modify(flow.fd, kDataEvents | (want ? EPOLLOUT : 0u));
}

void SendSide::on_data_event(FlowHandle id, std::uint32_t events) {
  const auto it = outgoing_.find(id);
  if (it == outgoing_.end() || it->second.fd < 0) return;
  OutgoingFlow& flow = it->second;
  if (!flow.connected && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
    if (const int error = socket_error(flow.fd); error != 0) {
      fail(flow, "data connection to " + flow.address.text() + ": " + std::strerror(error));
      return;
    }
    flow.connected = true;
  }
  if ((events & (EPOLLIN | EPOLLRDHUP | EPOLLERR | EPOLLHUP)) != 0) {
    // The receiver never writes on a data connection: this is its end.
    char byte = 0;
    const ssize_t n = recv(flow.fd, &byte, 1, MSG_DONTWAIT);
    const int error = n < 0 ? errno : 0;
    if (n == 0 || (n < 0 && error != EAGAIN && error != EWOULDBLOCK)) {
      const std::string why = n == 0 ? "closed" : std::strerror(error);
      // On a reused connection, bytes still unacknowledged when it closes
      // were lost: a receiver that closes with bytes unread resets it, and
      // bytes that come after its close are reset. So is a flow that
      // followed another onto it whose receiver did not keep it.
      const bool lost =
          flow.reused_connection && (error == ECONNRESET || unacknowledged_bytes(flow.fd) != 0);
      if (flow.sent_bytes == flow.data.size() && !lost) {
        // Everything is out; the receiver's DONE on the control connection says the rest.
        loop_.remove_and_close(flow.fd);
      } else if (!replace_reused_connection(flow, why)) {
        fail(flow, "data connection " + why + " by the receiver after " +
                       std::to_string(flow.sent_bytes) + " of " + std::to_string(flow.data.size()) +
                       " bytes");
      }
      return;
    }
  }
  if ((events & EPOLLOUT) != 0) pump(flow, monotonic_ns());
}

ssize_t SendSide::write_some(OutgoingFlow& flow, const void* bytes, std::size_t size) {
  const ssize_t n = ::send(flow.fd, bytes, size, MSG_NOSIGNAL);
  if (n > 0) return n;
  if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
  const std::string why = std::strerror(errno);
  if (!replace_reused_connection(flow, why)) fail(flow, "data connection: " + why);
  return -1;
}

void SendSide::pump(OutgoingFlow& flow, std::int64_t now_ns) {
  if (flow.state != FlowState::kPending || flow.fd < 0 || !flow.connected) return;
  if (flow.preamble.empty()) {  // the peer is not authenticated yet
    want_writable(flow, false);
    return;
  }
  apply_rate(flow, now_ns);
  bool blocked = false;  // the socket is full: wait for EPOLLOUT
  while (flow.preamble_sent < flow.preamble.size()) {
    const ssize_t n = write_some(flow, flow.preamble.data() + flow.preamble_sent,
                                 flow.preamble.size() - flow.preamble_sent);
    if (n < 0) return;
    if (n == 0) {
      blocked = true;
      break;
    }
    flow.preamble_sent += static_cast<std::size_t>(n);
  }
  if (!blocked) {
    std::uint64_t limit = flow.data.size() - flow.sent_bytes;
    if (!flow.grant.held() && flow.sent_bytes < config_.unscheduled_bytes &&
        !path_contended(flow.peer, now_ns)) {
      limit = std::min(limit, config_.unscheduled_bytes - flow.sent_bytes);
    }
    limit = std::min(limit, flow.pacer->allowance(now_ns));
    while (limit > 0) {
      const std::size_t chunk =
          static_cast<std::size_t>(std::min<std::uint64_t>(limit, kMaxWriteBytes));
      const ssize_t n = write_some(flow, flow.data.data() + flow.sent_bytes, chunk);
      if (n < 0) return;
      if (n == 0) {
        blocked = true;
        break;
      }
      const auto written = static_cast<std::uint64_t>(n);
      flow.sent_bytes += written;
      flow.last_written_ns = now_ns;
      limit -= written;
      flow.pacer->on_written(written);
      flow.grant.on_sent(written);
      stats_.data_bytes_sent += written;
    }
  }
  want_writable(flow, blocked && flow.sent_bytes < flow.data.size());
  if (flow.sent_bytes == flow.data.size()) pass_connection_on(flow, now_ns);
}

// ---- the rate a flow is held to ----

double SendSide::target_rate_bps(const OutgoingFlow& flow, double granted_bps, bool contended,
                                 std::int64_t now_ns) const {
  if (!contended || flow.progress.own.reached()) return granted_bps;
  // A pause is the receiver's choice (its other flows are due first), or
  // this sender's (its uplink serves others first); the rest goes under
  // TCP's congestion control alone, without waiting for a first grant whose
  // round trip crosses the full queue, within what this uplink leaves it.
  if (flow.grant.active(to_core_ps(now_ns)) && granted_bps == 0) return 0;
  return flow.uplink_available_bps;
}

double SendSide::downlink_bps(PeerId peer_id) const {
  const Peer* peer = peers_.find(peer_id);
  if (peer == nullptr || !peer->hello || peer->hello->downlink_bps == 0) return Pacer::kUnpaced;
  return static_cast<double>(peer->hello->downlink_bps);
}

bool SendSide::path_contended(PeerId peer, std::int64_t now_ns) const {
  const auto it = paths_.find(peer);
  return it != paths_.end() && it->second.contended(now_ns);
}

double SendSide::granted_rate_bps(const OutgoingFlow& flow, std::int64_t now_ns) const {
  if (flow.grant.active(to_core_ps(now_ns))) {
    return std::min(flow.grant.grant().rate_bps, flow.uplink_available_bps);
  }
  if (!flow.grant.held()) {
    if (flow.sent_bytes < config_.unscheduled_bytes) return Pacer::kUnpaced;
    if (now_ns < flow.started_ns + config_.first_grant_wait_ns) return 0;  // await the grant
  }
  // No lease (never came, or expired): a fair share of the receiver's
  // downlink among this endpoint's flows to it; TCP's own share if unknown.
  const double downlink = downlink_bps(flow.peer);
  if (std::isinf(downlink)) return downlink;
  const auto flows = std::count_if(outgoing_.begin(), outgoing_.end(), [&](const auto& entry) {
    return entry.second.peer == flow.peer && entry.second.state == FlowState::kPending &&
           !entry.second.awaits_connection;
  });
  return downlink / static_cast<double>(std::max<std::ptrdiff_t>(1, flows));
}

void SendSide::apply_rate(OutgoingFlow& flow, std::int64_t now_ns) {
  if (!flow.pacer) return;
  const double granted = granted_rate_bps(flow, now_ns);
  const bool contended = path_contended(flow.peer, now_ns);
  const double rate = target_rate_bps(flow, granted, contended, now_ns);
  // Unpaced on a contended path, the socket holds a few ms of the grant (of
  // the downlink without one), not megabytes: a pause, or pacing again, then
  // acts within milliseconds.
  const double buffered = !std::isinf(rate) || !contended       ? rate
                          : granted > 0 && !std::isinf(granted) ? granted
                                                                : downlink_bps(flow.peer);
  if (rate != flow.pacer->rate_bps() || buffered != flow.pacer->buffered_bps()) {
    flow.pacer->set_rate(rate, now_ns, buffered);
  }
}

// ---- from the receiver ----

void SendSide::on_grant(const Peer& peer, const wire::Grant& grant) {
  if ((grant.flow & wire::kPlanGrantBit) != 0) return on_planned_grant(peer, grant);
  OutgoingFlow* found = find_wire_flow(peer, grant.flow);
  if (found == nullptr) return;  // finished or not ours
  OutgoingFlow& flow = *found;
  if (flow.state != FlowState::kPending) return;
  const std::int64_t now = monotonic_ns();
  // The flow's own first grant replaces its plan's (whose epochs are the plan's).
  if (flow.on_plan) {
    flow.grant = core::GrantHolder{};
    flow.on_plan = false;
  }
  if (!flow.grant.accept(lease_of(grant), to_core_ps(now))) return;  // stale or reordered
  ++stats_.grants_received;
  if (flow.fd >= 0) set_priority(flow.fd, std::min<int>(grant.priority, kMaxSocketPriority));
  rebalance_uplink(now);
  pump(flow, now);
}

void SendSide::on_done(const Peer& peer, const wire::Done& done) {
  OutgoingFlow* found = find_wire_flow(peer, done.flow);
  if (found == nullptr) return;
  OutgoingFlow& flow = *found;
  if (flow.state != FlowState::kPending) return;
  // The receiver has every byte, even of a flow that started over on a new
  // connection after the old one closed (whose bytes may have come after all).
  if (done.bytes != flow.data.size()) {
    fail(flow, "receiver reported " + std::to_string(done.bytes) + " bytes of " +
                   std::to_string(flow.data.size()));
    return;
  }
  end(flow, FlowState::kDone, "");
}

void SendSide::on_refused(const Peer& peer, const wire::Error& error) {
  if (OutgoingFlow* flow = find_wire_flow(peer, error.flow); flow != nullptr) {
    fail(*flow, "receiver refused the flow: " + error.reason);
  }
}

void SendSide::fail_flows_to(PeerId peer, const std::string& reason) {
  for (auto& [id, flow] : outgoing_) {
    if (flow.peer == peer) fail(flow, reason);
  }
  pool_.close_peer(peer);
  if (const auto path = paths_.find(peer); path != paths_.end()) {
    stats_.contended_paths += path->second.episodes();
    stats_.grant_delivery += path->second.delivery();
    paths_.erase(path);
  }
}

void SendSide::end(OutgoingFlow& flow, FlowState state, const std::string& error) {
  if (flow.state != FlowState::kPending) return;
  flow.state = state;
  flow.error = error;
  // Reusable when every byte went and was delivered, and the receiver reads
  // the next DataOpen after them.
  const bool reusable = state == FlowState::kDone && flow.fd >= 0 && flow.connected &&
                        flow.preamble_sent == flow.preamble.size() &&
                        flow.sent_bytes == flow.data.size() && peer_reuses_connections(flow.peer);
  if (reusable) {
    loop_.remove(flow.fd);
    pool_.give(flow.peer, {flow.fd, flow.pacer->kernel_rate_set()}, monotonic_ns());
    flow.fd = -1;
  } else {
    loop_.remove_and_close(flow.fd);
  }
  flow.pacer.reset();
  completions_.notify();
}

// ---- the tick ----

void SendSide::tick(std::int64_t now_ns) {
  pool_.expire(now_ns);
  expire_plans(now_ns);
  measure_paths(now_ns);  // off, measured only (stats().grant_delivery)
  rebalance_uplink(now_ns);
  start_flows_left_waiting(now_ns);
  for (auto& [id, flow] : outgoing_) {
    if (flow.state == FlowState::kPending) fail_if_peer_silent(flow, now_ns);
    if (flow.state == FlowState::kPending && flow.awaits_connection) check_risk(flow, now_ns);
    if (flow.state != FlowState::kPending || flow.fd < 0 || !flow.connected) continue;
    apply_rate(flow, now_ns);
    if (!flow.writable && !flow.preamble.empty() && flow.sent_bytes < flow.data.size() &&
        flow.pacer->next_write_ns(now_ns) <= now_ns) {
      pump(flow, now_ns);
    }
    if (flow.state == FlowState::kPending) check_risk(flow, now_ns);
  }
}

void SendSide::measure_paths(std::int64_t now_ns) {
  const auto now_ps = to_core_ps(now_ns);
  for (auto& [id, flow] : outgoing_) {
    FlowProgress& p = flow.progress;
    if (flow.state != FlowState::kPending || flow.fd < 0 || !p.known) continue;
    const auto tcp = tcp_progress(flow.fd);
    if (!tcp) continue;
    const double seconds = static_cast<double>(now_ns - p.read_ns) / 1e9;
    const std::uint64_t delivered = tcp->bytes_acked - p.acked_at_read_bytes;
    const std::uint32_t retransmits = tcp->retransmits - p.retransmits_at_read;
    const bool backlogged =
        p.acked_at_read_bytes - p.acked_at_start_bytes < flow.preamble.size() + flow.data.size();
    p.read_ns = now_ns;
    p.acked_at_read_bytes = tcp->bytes_acked;
    p.retransmits_at_read = tcp->retransmits;
    measure_unpaced_delivery(flow, tcp->bytes_acked, now_ns);
    // Only a flow a grant holds to a rate (not a fallback share), with bytes
    // still to deliver, says whether it gets what its grant allows; and only
    // past its first window whether the path does.
    if (!backlogged || !flow.grant.active(now_ps)) continue;
    // What the grant allowed within this sender's own uplink share: a flow
    // its uplink holds back is not short on the path.
    const double allowed =
        std::min(flow.grant.grant().rate_bps, flow.uplink_available_bps) / 8 * seconds;
    p.own.add(allowed, delivered, now_ns);
    if (now_ns < p.judged_from_ns) continue;
    PathContention& path = paths_.try_emplace(flow.peer, config_.contention_fallback).first->second;
    const std::uint64_t episodes = path.episodes();
    path.add(allowed, delivered, retransmits, tcp->queue_delay_ns, now_ns);
    if (path.episodes() > episodes) warn_of_idle_restart(flow);
  }
  // tick() applies each flow's rate next, contended or not.
}

// Behind the queue that makes a path contended, each connection that starts
// its window over after an idle spell pays that queue's round trip once per
// doubling: most of what SAFS lost to gloo on 1F1B and ZB-H1 next to a Cubic
// bulk flow (docs/real-pipeline.md, "One connection behind a deep queue").
// The setting is the operator's; say so once per endpoint.
void SendSide::warn_of_idle_restart(const OutgoingFlow& flow) {
  if (idle_restart_checked_) return;
  idle_restart_checked_ = true;
  if (tcp_restarts_after_idle() != true) return;
  ++stats_.idle_restart_warnings;
  config_.log("path to " + flow.address.text() +
              " is contended (other traffic fills its bottleneck) and this host's "
              "net.ipv4.tcp_slow_start_after_idle is 1: a data connection idle for longer than "
              "its retransmission timeout starts its congestion window over behind that queue "
              "(0 keeps it; docs/real-pipeline.md, \"One connection behind a deep queue\")");
}

void SendSide::fail_if_peer_silent(OutgoingFlow& flow, std::int64_t now_ns) {
  const Peer* peer = peers_.find(flow.peer);
  const std::int64_t heard = peer == nullptr ? 0 : peer->last_heard_ns;
  const std::int64_t timeout = config_.endpoint_limits.silent_peer_timeout_ns;
  if (now_ns - std::max(heard, flow.last_written_ns) > timeout) {
    fail(flow, "receiver silent for " + std::to_string(timeout / kNsPerMs) +
                   " ms (no control frame, no bytes taken)");
  }
}

void SendSide::check_risk(OutgoingFlow& flow, std::int64_t now_ns) {
  if (!flow.hint.urgent || flow.hint.deadline_ns == kNoDeadlineNs) return;
  // Before the first grant the flow waits by design; judge it once it has a rate.
  if (!flow.grant.held() && now_ns < flow.started_ns + config_.first_grant_wait_ns) return;
  const double remaining_bits = static_cast<double>(undelivered_bytes(flow)) * 8;
  const double rate = expected_rate_bps(flow, now_ns);
  const double now = static_cast<double>(now_ns);
  const double deadline = static_cast<double>(flow.hint.deadline_ns);
  // Without a projection (no rate known yet), only a flow already past its
  // deadline is late.
  if (rate <= 0 && now <= deadline) return;
  const double finish_ns = rate > 0 ? now + remaining_bits / rate * 1e9 : now;
  const double lateness_ns = finish_ns - deadline;
  // Just in time, a flow is held to about the rate it needs, and its receiver
  // re-grants only once that moves by more than theta: a projection within
  // theta of the time left is that lag, not a risk. An episode ends once the
  // projection is on time again.
  const double left_ns = deadline - now;
  const double tolerance_ns = std::max(0.0, left_ns) * config_.scheduler.grants.change_threshold;
  if (lateness_ns <= 0) flow.at_risk = false;
  if (lateness_ns <= tolerance_ns || flow.at_risk) return;  // told once per episode
  flow.at_risk = true;
  ++stats_.risk_reports;
  if (!risk_handler_) return;
  FlowRisk risk;
  risk.flow = flow.id;
  risk.tag = flow.hint.tag;
  risk.reported_at_ns = now_ns;
  risk.projected_lateness_ns =
      static_cast<std::int64_t>(std::min(lateness_ns, static_cast<double>(kNoDeadlineNs)));
  risk.rate_bps = rate;
  risk.needed_bps =
      left_ns > 0 ? remaining_bits / left_ns * 1e9 : std::numeric_limits<double>::infinity();
  risk_handler_(risk);
}

std::uint64_t SendSide::undelivered_bytes(const OutgoingFlow& flow) const {
  const FlowProgress& p = flow.progress;
  if (flow.fd < 0 || !p.known) return flow.data.size() - flow.sent_bytes;
  const std::uint64_t total = flow.preamble.size() + flow.data.size();
  const std::uint64_t acked = p.acked_at_read_bytes - p.acked_at_start_bytes;
  return acked >= total ? 0 : total - acked;
}

void SendSide::measure_unpaced_delivery(OutgoingFlow& flow, std::uint64_t acked_bytes,
                                        std::int64_t now_ns) {
  FlowProgress& p = flow.progress;
  const bool unpaced = std::isinf(flow.pacer->rate_bps());
  p.window_unpaced = p.window_unpaced && unpaced;
  if (!unpaced) {
    p.unpaced_windows = 0;
    p.delivered_known = false;
  }
  if (now_ns - p.window_from_ns < config_.contention_fallback.window_ns) return;
  p.unpaced_windows = p.window_unpaced ? p.unpaced_windows + 1 : 0;
  if (p.unpaced_windows >= 3) {
    p.delivered_known = true;
    p.delivered_bps = static_cast<double>(acked_bytes - p.acked_at_previous_window_bytes) * 8 /
                      (static_cast<double>(now_ns - p.previous_window_from_ns) / 1e9);
    // For the path only from windows in which the flow still had bytes to
    // deliver (its last ones say less than what the path gives).
    const auto path = paths_.find(flow.peer);
    if (path != paths_.end() && undelivered_bytes(flow) > 0) {
      path->second.note_unpaced_delivery(p.delivered_bps);
    }
  }
  p.previous_window_from_ns = p.window_from_ns;
  p.acked_at_previous_window_bytes = p.acked_at_window_bytes;
  p.window_from_ns = now_ns;
  p.acked_at_window_bytes = acked_bytes;
  p.window_unpaced = unpaced;
}

// A flow paused for others was reported at risk on every pause, though its
// receiver serves it in its turn (EDF at line rate: the testbed's later two
// transfers, met with 130-200 ms to spare); an unpaced one was never judged,
// though next to unmanaged traffic is where flows miss. So a paused flow is
// judged at the best it could get, and an unpaced one at what TCP gives it.
double SendSide::expected_rate_bps(const OutgoingFlow& flow, std::int64_t now_ns) const {
  // A flow waiting to follow another onto its connection is paused by this sender.
  const double held_to = flow.pacer && !flow.awaits_connection ? flow.pacer->rate_bps() : 0;
  // Nothing delivered in two windows (a timeout's back-off) is no projection.
  if (std::isinf(held_to) && flow.progress.delivered_known) return flow.progress.delivered_bps;
  // Not measured yet (its own first three windows, 60 ms: longer than a
  // 0.5 MiB tensor next to a competitor): what the path's last unpaced flow
  // got in this contention episode, else no projection.
  if (std::isinf(held_to)) {
    const auto path = paths_.find(flow.peer);
    return config_.contention_fallback.judge_by_path_rate && path != paths_.end() &&
                   path->second.contended(now_ns)
               ? path->second.unpaced_delivery_bps()
               : 0;
  }
  if (held_to > 0) return held_to;
  double best_bps = downlink_bps(flow.peer);
  if (config_.uplink.uplink_bps > 0) best_bps = std::min(best_bps, config_.uplink.uplink_bps);
  return std::isinf(best_bps) ? 0 : best_bps;
}

bool SendSide::has_pending() const {
  return std::any_of(outgoing_.begin(), outgoing_.end(),
                     [](const auto& entry) { return entry.second.state == FlowState::kPending; });
}

void SendSide::add_stats(EndpointStats& stats) const {
  stats.data_bytes_sent += stats_.data_bytes_sent;
  stats.grants_received += stats_.grants_received;
  stats.data_connections_opened += stats_.data_connections_opened;
  stats.data_connections_reused += stats_.data_connections_reused;
  stats.flows_followed += stats_.flows_followed;
  stats.idle_restart_warnings += stats_.idle_restart_warnings;
  stats.risk_reports += stats_.risk_reports;
  stats.uplink_reports_sent += stats_.uplink_reports_sent;
  stats.plans_sent += stats_.plans_sent;
  stats.flows_on_plans += stats_.flows_on_plans;
  stats.plan_warnings_received += stats_.plan_warnings_received;
  stats.plans_dropped += stats_.plans_dropped;
  stats.data_connections_idle += pool_.idle();
  stats.contended_paths += stats_.contended_paths;  // of peers gone
  stats.grant_delivery += stats_.grant_delivery;
  for (const auto& [peer, path] : paths_) {
    stats.contended_paths += path.episodes();
    stats.grant_delivery += path.delivery();
  }
}

}  // namespace safs::runtime
