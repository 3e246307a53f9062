// Incoming flows: per-peer limits, the scheduler and its grants, the
// detection of senders that ignore them, and delivery.
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>

#include "runtime/clock.h"
#include "runtime/endpoint_core.h"

namespace safs::runtime {
namespace {

constexpr std::size_t kMaxReadPerEventBytes = 4 << 20;  // then let other sockets run
// Slack beyond this (about 11 days) is treated as no deadline; it also keeps
// the clock arithmetic far from overflow whatever a peer sends.
constexpr std::int64_t kMaxSlackNs = 1'000'000 * kNsPerSecond;

}  // namespace

core::SemanticFlow EndpointCore::semantic_flow(const IncomingFlow& flow, const Peer& peer,
                                               std::int64_t slack_ns, std::int64_t now_ns) const {
  core::SemanticFlow semantic;
  semantic.id = flow.id;
  semantic.sender = static_cast<std::uint32_t>(peer.id);
  semantic.size_bytes = flow.announce.size_bytes;
  semantic.remaining_bytes = flow.announce.size_bytes - flow.received_bytes;
  semantic.dependency = flow.announce.group;
  const bool urgent = flow.announce.urgent != 0 && !peer.demoted;
  semantic.urgency = urgent ? core::Urgency::kUrgent : core::Urgency::kBackground;
  semantic.criticality = peer.demoted ? 0 : flow.announce.criticality;
  if (slack_ns != wire::kNoDeadline && slack_ns < kMaxSlackNs) {
    // The sender's slack was measured when it sent; half an RTT has passed since.
    const std::int64_t slack = std::max(slack_ns, -kMaxSlackNs) - peer.rtt_ns / 2;
    semantic.no_bubble_ps = to_core_ps(now_ns + slack);
  }
  return semantic;
}

void EndpointCore::on_announce(Peer& peer, const wire::Announce& announce) {
  auto refuse = [&](wire::ErrorCode code, const std::string& reason) {
    log("refusing flow " + std::to_string(announce.flow) + " from " + peer.name + ": " + reason);
    wire::Error error;
    error.flow = announce.flow;
    error.from_receiver = 1;
    error.code = code;
    error.reason = reason;
    send_control(peer, error);
  };
  if (announce.flow == 0) return refuse(wire::ErrorCode::kMalformed, "flow id 0");
  if (incoming_by_remote_.count({peer.id, announce.flow}) != 0) {
    return refuse(wire::ErrorCode::kMalformed, "flow announced twice");
  }
  const PeerLimits& limits = config_.limits;
  if (peer.incoming_flows >= limits.max_flows) {
    return refuse(wire::ErrorCode::kFlowLimit,
                  "more than " + std::to_string(limits.max_flows) + " flows from one peer");
  }
  if (announce.size_bytes > limits.max_message_bytes) {
    return refuse(wire::ErrorCode::kTooLarge,
                  std::to_string(announce.size_bytes) + " bytes is more than the " +
                      std::to_string(limits.max_message_bytes) + "-byte limit");
  }
  const auto posted = std::find_if(posted_.begin(), posted_.end(), [&](const auto& entry) {
    return !entry.second.matched && entry.second.tag == announce.tag &&
           entry.second.buffer.size() >= announce.size_bytes;
  });
  if (posted == posted_.end() &&
      peer.buffer_bytes + announce.size_bytes > limits.max_buffer_bytes) {
    return refuse(
        wire::ErrorCode::kMemoryLimit,
        "would hold more than " + std::to_string(limits.max_buffer_bytes) + " bytes for one peer");
  }
  const std::int64_t now = monotonic_ns();
  const core::FlowId id = next_incoming_++;
  IncomingFlow& flow =
      incoming_.emplace(id, IncomingFlow{.overrun = OverrunDetector(config_.enforcement)})
          .first->second;
  flow.id = id;
  flow.peer = peer.id;
  flow.announce = announce;
  if (posted != posted_.end()) {
    posted->second.matched = true;
    posted->second.status.peer = peer.name;
    flow.posted = posted->first;
    flow.target = posted->second.buffer.first(announce.size_bytes);
  } else {
    // Not value-initialised: pages are touched as bytes land, not all at once.
    flow.owned.reset(new std::byte[announce.size_bytes]);
    flow.owned_bytes = announce.size_bytes;
    flow.target = std::span(flow.owned.get(), announce.size_bytes);
    peer.buffer_bytes += announce.size_bytes;
  }
  ++peer.incoming_flows;
  incoming_by_remote_[{peer.id, announce.flow}] = id;
  scheduler_.add_flow(semantic_flow(flow, peer, announce.slack_ns, now));
  try_bind_parked(peer.id);
}

void EndpointCore::on_update(Peer& peer, const wire::Update& update) {
  const auto it = incoming_by_remote_.find({peer.id, update.flow});
  if (it == incoming_by_remote_.end()) return;  // finished meanwhile
  IncomingFlow& flow = incoming_.at(it->second);
  flow.announce.urgent = update.urgent;
  flow.announce.criticality = update.criticality;
  flow.announce.group = update.group;
  flow.announce.slack_ns = update.slack_ns;
  scheduler_.add_flow(semantic_flow(flow, peer, update.slack_ns, monotonic_ns()));
}

// ---- data connections ----

void EndpointCore::bind_data(UnboundConnection& connection) {
  const wire::DataOpen& open = *connection.data_open;
  const auto peer = peer_by_session_.find(open.session);
  const auto known = peer == peer_by_session_.end()
                         ? incoming_by_remote_.end()
                         : incoming_by_remote_.find({peer->second, open.flow});
  if (known == incoming_by_remote_.end()) {
    // Came before its peer's hello or its flow's announce: park it, unread.
    const auto parked = std::count_if(unbound_.begin(), unbound_.end(), [&](const auto& entry) {
      return entry.second.data_open && entry.second.data_open->session == open.session;
    });
    if (parked >= static_cast<std::ptrdiff_t>(config_.limits.max_parked_connections)) {
      log("closing data connection from " + remote_host(connection.fd) +
          ": too many waiting for their announce");
      loop_.remove(connection.fd);
      close(connection.fd);
      return;
    }
    const int fd = connection.fd;
    unbound_[fd] = std::move(connection);
    loop_.modify(fd, 0);  // hang-ups are still reported
    return;
  }
  IncomingFlow& flow = incoming_.at(known->second);
  auto reject = [&](const std::string& reason) {
    log("closing data connection from " + remote_host(connection.fd) + ": " + reason);
    loop_.remove(connection.fd);
    close(connection.fd);
  };
  if (flow.fd >= 0) return reject("a second data connection for one flow");
  if (open.size_bytes != flow.announce.size_bytes) {
    reject("its size differs from the announce");
    drop_incoming(flow, "data connection size differs from the announce");
    return;
  }
  flow.fd = connection.fd;
  const core::FlowId id = flow.id;
  loop_.remove(flow.fd);
  loop_.add(flow.fd, EPOLLIN, [this, id](std::uint32_t events) { on_data_in_event(id, events); });
  // Payload that arrived with the data-open frame.
  const std::uint64_t early = connection.bytes.size();
  if (early > flow.target.size()) {
    drop_incoming(flow, "more bytes than announced");
    return;
  }
  std::memcpy(flow.target.data(), connection.bytes.data(), early);
  flow.received_bytes = early;
  flow.overrun.on_bytes(early);
  stats_.data_bytes_received += early;
  if (flow.received_bytes == flow.target.size()) {
    complete_incoming(flow);
  } else {
    read_data(flow, monotonic_ns());
  }
}

bool EndpointCore::try_bind_parked(PeerId peer_id) {
  const auto peer = peers_.find(peer_id);
  if (peer == peers_.end() || !peer->second.hello) return false;
  std::vector<int> ready;
  for (const auto& [fd, connection] : unbound_) {
    if (connection.data_open && connection.data_open->session == peer->second.hello->session &&
        incoming_by_remote_.count({peer_id, connection.data_open->flow}) != 0) {
      ready.push_back(fd);
    }
  }
  for (int fd : ready) {
    UnboundConnection connection = std::move(unbound_.at(fd));
    unbound_.erase(fd);
    loop_.modify(fd, EPOLLIN);
    bind_data(connection);
  }
  return !ready.empty();
}

void EndpointCore::on_data_in_event(core::FlowId id, std::uint32_t) {
  const auto it = incoming_.find(id);
  if (it != incoming_.end()) read_data(it->second, monotonic_ns());
}

void EndpointCore::read_data(IncomingFlow& flow, std::int64_t now_ns) {
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
      budget -= static_cast<std::size_t>(got);
      stats_.data_bytes_received += got;
      flow.overrun.on_bytes(got);
      if (flow.throttled) flow.read_bucket.consume(got);
      if (!flow.granted) scheduler_.note_unscheduled(got, to_core_ps(now_ns));
      continue;
    }
    if (n == 0) {
      drop_incoming(flow, "sender closed the data connection after " +
                              std::to_string(flow.received_bytes) + " of " +
                              std::to_string(flow.target.size()) + " bytes");
      return;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) break;
    if (errno == EINTR) continue;
    drop_incoming(flow, std::string("data connection: ") + std::strerror(errno));
    return;
  }
  scheduler_.update_remaining(flow.id, flow.target.size() - flow.received_bytes);
  if (flow.received_bytes == flow.target.size()) complete_incoming(flow);
}

// ---- the end of a flow ----

namespace {

void close_data(EventLoop& loop, IncomingFlow& flow) {
  if (flow.fd >= 0) {
    loop.remove(flow.fd);
    close(flow.fd);
    flow.fd = -1;
  }
}

}  // namespace

void EndpointCore::complete_incoming(IncomingFlow& flow) {
  Peer& peer = peers_.at(flow.peer);
  send_control(peer, wire::Done{flow.announce.flow, flow.announce.size_bytes});
  close_data(loop_, flow);
  ++stats_.incoming_completed;
  if (flow.posted != 0) {
    ReceiveStatus& status = posted_.at(flow.posted).status;
    status.state = FlowState::kDone;
    status.bytes = flow.announce.size_bytes;
  } else if (message_handler) {
    IncomingMessage message;
    message.peer = peer.name;
    message.tag = flow.announce.tag;
    message.group = flow.announce.group;
    message.data = flow.target;
    message_handler(message);
  }
  // The handler may have closed the peer, and with it this flow.
  const auto it = incoming_.find(flow.id);
  if (it == incoming_.end()) return;
  if (const auto p = peers_.find(flow.peer); p != peers_.end()) {
    --p->second.incoming_flows;
    p->second.buffer_bytes -= flow.owned_bytes;
  }
  scheduler_.remove_flow(flow.id);
  incoming_by_remote_.erase({flow.peer, flow.announce.flow});
  incoming_.erase(it);
}

void EndpointCore::drop_incoming(IncomingFlow& flow, const std::string& reason) {
  log("dropping incoming flow " + std::to_string(flow.announce.flow) + " from peer " +
      std::to_string(flow.peer) + ": " + reason);
  close_data(loop_, flow);
  ++stats_.incoming_failed;
  if (flow.posted != 0) {
    ReceiveStatus& status = posted_.at(flow.posted).status;
    status.state = FlowState::kFailed;
    status.error = reason;
  }
  if (const auto p = peers_.find(flow.peer); p != peers_.end()) {
    --p->second.incoming_flows;
    p->second.buffer_bytes -= flow.owned_bytes;
  }
  scheduler_.remove_flow(flow.id);
  incoming_by_remote_.erase({flow.peer, flow.announce.flow});
  incoming_.erase(flow.id);
}

// ---- grants and their enforcement ----

void EndpointCore::send_grants(const std::vector<core::Grant>& grants, std::int64_t now_ns) {
  for (const core::Grant& grant : grants) {
    const auto it = incoming_.find(grant.flow);
    if (it == incoming_.end()) continue;
    IncomingFlow& flow = it->second;
    const auto peer = peers_.find(flow.peer);
    if (peer == peers_.end()) continue;
    wire::Grant message;
    message.flow = flow.announce.flow;
    message.rate_bps = static_cast<std::uint64_t>(std::llround(grant.rate_bps));
    message.epoch = grant.epoch;
    message.lease_ns = static_cast<std::uint64_t>(from_core_ps(grant.valid_for_ps));
    message.byte_cap = grant.byte_cap;
    message.priority = grant.priority;
    send_control(peer->second, message);
    ++stats_.grants_sent;
    flow.granted = true;
    flow.granted_bps = grant.rate_bps;
    flow.overrun.on_grant(grant.rate_bps, now_ns);
    if (flow.throttled) flow.read_bucket.set_rate(grant.rate_bps / 8, now_ns);
  }
}

void EndpointCore::demote(Peer& peer, std::int64_t now_ns) {
  peer.demoted = true;
  ++stats_.demoted_peers;
  log("peer " + peer.name + " sends well above its grants: its flows are demoted to background " +
      "and its reads held to its grants");
  for (auto& [id, flow] : incoming_) {
    if (flow.peer != peer.id) continue;
    flow.throttled = true;
    flow.read_bucket.set_rate(flow.granted_bps / 8, now_ns);
    scheduler_.add_flow(semantic_flow(flow, peer, flow.announce.slack_ns, now_ns));
  }
}

void EndpointCore::receive_tick(std::int64_t now_ns) {
  send_grants(scheduler_.poll(to_core_ps(now_ns)), now_ns);
  std::vector<core::FlowId> resume;
  for (auto& [id, flow] : incoming_) {
    Peer& peer = peers_.at(flow.peer);
    if (flow.overrun.tick(now_ns) && !peer.demoted) demote(peer, now_ns);
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

// ---- posted receives ----

ReceiveHandle EndpointCore::post_receive(std::uint64_t tag, std::span<std::byte> buffer) {
  const ReceiveHandle id = next_receive_++;
  posted_[id] = PostedReceive{tag, buffer, false, {}};
  return id;
}

ReceiveStatus EndpointCore::test_receive(ReceiveHandle id) const {
  const auto it = posted_.find(id);
  if (it == posted_.end()) return {FlowState::kFailed, "unknown receive", 0, {}};
  return it->second.status;
}

}  // namespace safs::runtime
