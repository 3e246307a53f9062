#include "runtime/peer_table.h"

#include <sys/epoll.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/clock.h"

namespace safs::runtime {

PeerTable::PeerTable(EventLoop& loop, const EndpointConfig& config, wire::Hello local,
                     ChannelKeys keys, Events& events)
    : loop_(loop), config_(config), local_(local), keys_(std::move(keys)), events_(events) {}

wire::Hello PeerTable::fresh_hello() const {
  wire::Hello hello = local_;
  hello.nonce = random_nonce();
  return hello;
}

Peer* PeerTable::find(PeerId id) {
  const auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : &it->second;
}

const Peer* PeerTable::find(PeerId id) const {
  const auto it = peers_.find(id);
  return it == peers_.end() ? nullptr : &it->second;
}

Peer* PeerTable::find_by_connection(std::uint64_t connection_id) {
  const auto it = peer_by_connection_.find(connection_id);
  return it == peer_by_connection_.end() ? nullptr : find(it->second);
}

Peer& PeerTable::add(std::string name) {
  const PeerId id = next_peer_++;
  Peer& peer = peers_[id];
  peer.id = id;
  peer.name = std::move(name);
  peer.since_ns = monotonic_ns();
  return peer;
}

Peer* PeerTable::connect(const PeerAddress& address, std::string& error) {
  if (const auto it = peer_by_name_.find(address.text()); it != peer_by_name_.end()) {
    if (Peer* peer = find(it->second)) return peer;
  }
  if (config_.security.insecure_loopback_only && !is_loopback(address.host)) {
    error = "not connecting to " + address.text() + ": insecure_loopback_only allows loopback only";
    return nullptr;
  }
  const int fd = connect_tcp(address);
  if (fd < 0) {
    error = "cannot connect to " + address.text() + ": " + std::strerror(errno);
    return nullptr;
  }
  set_no_delay(fd);
  set_priority(fd, kControlPriority);
  Peer& peer = add(address.text());
  peer.control = std::make_unique<ControlChannel>(fd, keys_, fresh_hello());
  const PeerId id = peer.id;
  peer_by_name_[peer.name] = id;
  loop_.add(fd, EPOLLIN | EPOLLOUT,
            [this, id](std::uint32_t events) { on_control_event(id, events); });
  return &peer;
}

void PeerTable::adopt(int fd, const wire::Hello& hello, std::span<const std::uint8_t> early_bytes) {
  if (peers_.size() >= config_.endpoint_limits.max_peers && !evict_unauthenticated()) {
    config_.log("refusing a control connection from " + remote_host(fd) + ": more than " +
                std::to_string(config_.endpoint_limits.max_peers) + " peers");
    ++stats_.refused_connections;
    loop_.remove(fd);
    ::close(fd);
    return;
  }
  Peer& peer = add(PeerAddress{remote_host(fd), hello.listen_port}.text());
  peer.control = std::make_unique<ControlChannel>(fd, keys_, fresh_hello(), hello);
  const PeerId id = peer.id;
  peer.connected = true;
  peer.hello = hello;
  peer.rtt_ns = smoothed_rtt_ns(fd);
  loop_.remove(fd);
  loop_.add(fd, EPOLLIN | EPOLLOUT,
            [this, id](std::uint32_t events) { on_control_event(id, events); });
  peer.control->feed(early_bytes);
  on_control_event(id, EPOLLIN | EPOLLOUT);
}

void PeerTable::send(Peer& peer, const wire::Message& message) {
  if (!peer.control) return;
  peer.control->send(message);
  if (peer.control->wants_write()) loop_.modify(peer.control->fd(), EPOLLIN | EPOLLOUT);
}

void PeerTable::on_control_event(PeerId id, std::uint32_t events) {
  Peer* found = find(id);
  if (found == nullptr) return;
  Peer& peer = *found;
  const int fd = peer.control->fd();
  const bool was_connected = peer.connected;
  if (!peer.connected && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
    if (const int error = socket_error(fd); error != 0) {
      close(id, std::string("connect failed: ") + std::strerror(error), false);
      return;
    }
    peer.connected = true;
    peer.rtt_ns = smoothed_rtt_ns(fd);
  }
  if (!peer.control->flush()) {
    // A refused connect shows as the first write's error.
    close(id,
          std::string(was_connected ? "write failed: " : "cannot connect: ") +
              std::strerror(peer.control->write_errno()),
          false);
    return;
  }
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
    std::vector<wire::Message> messages;
    const ControlChannel::ReadResult result =
        peer.control->read(messages, config_.limits.max_control_bytes_per_turn);
    if (!messages.empty()) peer.last_heard_ns = monotonic_ns();
    for (const wire::Message& message : messages) {
      dispatch(peer, message);
      if (find(id) == nullptr) return;  // the message closed the connection
    }
    if (result == ControlChannel::ReadResult::kAuthenticationFailed) {
      ++stats_.authentication_failures;
    }
    if (result == ControlChannel::ReadResult::kProtocolError ||
        result == ControlChannel::ReadResult::kAuthenticationFailed) {
      close(id, peer.control->error(), true);
      return;
    }
    if (result == ControlChannel::ReadResult::kClosed) {
      close(id, "connection closed by peer", false);
      return;
    }
  }
  if (peer.connected) {
    peer.rtt_ns = smoothed_rtt_ns(fd);
    loop_.modify(fd, EPOLLIN | (peer.control->wants_write() ? EPOLLOUT : 0u));
  }
}

// The channel lets through only what its handshake state allows: the peer's
// Hello (when we connected), one Auth once the peer proved itself, then
// opened frames.
void PeerTable::dispatch(Peer& peer, const wire::Message& message) {
  if (const auto* hello = std::get_if<wire::Hello>(&message)) {
    peer.hello = *hello;
    return;
  }
  if (std::holds_alternative<wire::Auth>(message)) {
    const std::uint64_t connection_id = peer.control->crypto()->connection_id();
    if (peer_by_connection_.count(connection_id) != 0) {  // 2^-64 by chance
      close(peer.id, "connection id already bound", true);
      return;
    }
    peer.authenticated = true;
    peer.connection_id = connection_id;
    peer_by_connection_[connection_id] = peer.id;
    const std::string& member = peer.control->verified_member();
    peer.identity = member.empty() ? peer.name : member;
    if (!member.empty()) peer.job = keys_.roster.at(member).job;
    // A new connection of an identity starts with the standing it earned.
    peer.demoted = standing(peer).demoted_until_ns > monotonic_ns();
    events_.on_peer_identified(peer);
    return;
  }
  if (std::holds_alternative<wire::DataOpen>(message)) {
    close(peer.id, "data-open on a control connection", true);
    return;
  }
  if (const auto* error = std::get_if<wire::Error>(&message);
      error != nullptr && error->flow == 0) {
    close(peer.id, "peer reported: " + error->reason, false);
    return;
  }
  events_.on_flow_message(peer, message);
}

void PeerTable::close(PeerId id, const std::string& reason, bool protocol_error) {
  auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  config_.log("closing control connection with " + peer.name + ": " + reason);
  if (protocol_error) {
    ++stats_.protocol_errors;
    wire::Error error;
    error.code = wire::ErrorCode::kMalformed;
    error.reason = reason;
    peer.control->send(error);  // best effort: the connection closes now anyway
  }
  events_.on_peer_closing(peer, reason);
  if (peer.authenticated) peer_by_connection_.erase(peer.connection_id);
  if (const auto n = peer_by_name_.find(peer.name); n != peer_by_name_.end() && n->second == id) {
    peer_by_name_.erase(n);
  }
  stats_.control_bytes_sent += peer.control->bytes_sent();
  stats_.control_bytes_received += peer.control->bytes_received();
  loop_.remove(peer.control->fd());
  peers_.erase(it);  // its control channel closes the socket
}

bool PeerTable::evict_unauthenticated() {
  const auto oldest =
      std::min_element(peers_.begin(), peers_.end(), [](const auto& a, const auto& b) {
        // Unauthenticated first, then the oldest.
        return std::pair(a.second.authenticated, a.second.since_ns) <
               std::pair(b.second.authenticated, b.second.since_ns);
      });
  if (oldest == peers_.end() || oldest->second.authenticated) return false;
  ++stats_.refused_connections;
  close(oldest->first, "too many peers: closed the oldest unauthenticated one", false);
  return true;
}

void PeerTable::expire(std::int64_t now_ns) {
  std::vector<std::pair<PeerId, std::string>> late;
  for (const auto& [id, peer] : peers_) {
    const std::int64_t partial_since = peer.control->partial_frame_since_ns();
    if (!peer.authenticated && now_ns - peer.since_ns > config_.security.handshake_timeout_ns) {
      late.emplace_back(id, "handshake not completed in time");
    } else if (partial_since != 0 &&
               now_ns - partial_since > config_.limits.partial_frame_timeout_ns) {
      late.emplace_back(id, "a partial frame for more than " +
                                std::to_string(config_.limits.partial_frame_timeout_ns / kNsPerMs) +
                                " ms");
    }
  }
  for (const auto& [id, reason] : late) close(id, reason, false);
}

// ---- what is held for each peer ----

std::optional<Refusal> PeerTable::refusal(const Peer& peer, std::uint64_t size_bytes,
                                          bool buffered) const {
  const PeerLimits& limits = config_.limits;
  if (peer.incoming_flows >= limits.max_flows) {
    return Refusal{wire::ErrorCode::kFlowLimit,
                   "more than " + std::to_string(limits.max_flows) + " flows from one peer"};
  }
  if (size_bytes > limits.max_message_bytes) {
    return Refusal{wire::ErrorCode::kTooLarge,
                   std::to_string(size_bytes) + " bytes is more than the " +
                       std::to_string(limits.max_message_bytes) + "-byte limit"};
  }
  if (buffered && peer.buffer_bytes + size_bytes > limits.max_buffer_bytes) {
    return Refusal{
        wire::ErrorCode::kMemoryLimit,
        "would hold more than " + std::to_string(limits.max_buffer_bytes) + " bytes for one peer"};
  }
  const std::uint64_t budget = config_.endpoint_limits.max_buffer_bytes;
  if (buffered && buffer_bytes_ + size_bytes > budget) {
    return Refusal{wire::ErrorCode::kMemoryLimit,
                   "would hold more than " + std::to_string(budget) +
                       " bytes across all peers (the endpoint's memory budget)"};
  }
  return std::nullopt;
}

void PeerTable::charge(Peer& peer, std::uint64_t buffered_bytes) {
  ++peer.incoming_flows;
  peer.buffer_bytes += buffered_bytes;
  buffer_bytes_ += buffered_bytes;
}

void PeerTable::refund(PeerId id, std::uint64_t buffered_bytes) {
  buffer_bytes_ -= buffered_bytes;
  if (Peer* peer = find(id)) {
    --peer->incoming_flows;
    peer->buffer_bytes -= buffered_bytes;
  }
}

void PeerTable::add_stats(EndpointStats& stats) const {
  stats.control_bytes_sent += stats_.control_bytes_sent;
  stats.control_bytes_received += stats_.control_bytes_received;
  stats.protocol_errors += stats_.protocol_errors;
  stats.authentication_failures += stats_.authentication_failures;
  stats.refused_connections += stats_.refused_connections;
  for (const auto& [id, peer] : peers_) {
    stats.control_bytes_sent += peer.control->bytes_sent();
    stats.control_bytes_received += peer.control->bytes_received();
    stats.incoming_buffer_bytes += peer.buffer_bytes;
  }
  stats.peers = peers_.size();
}

}  // namespace safs::runtime
