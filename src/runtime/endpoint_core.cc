#include "runtime/endpoint_core.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <random>
#include <stdexcept>
#include <type_traits>

#include "runtime/clock.h"

namespace safs::runtime {
namespace {

constexpr std::int64_t kTickNs = kNsPerMs;  // one epoll tick: pacing wake-ups, leases, risk
constexpr std::int64_t kIdleWaitNs = 100 * kNsPerMs;
// An accepted connection must say what it is (and a parked data connection
// find its flow) within this long.
constexpr std::int64_t kUnboundTimeoutNs = 2 * kNsPerSecond;
constexpr std::size_t kMaxUnboundConnections = 256;

EndpointConfig with_link(EndpointConfig config) {
  config.scheduler.allocator.link_bps = config.downlink_bps;
  if (!config.log) {
    config.log = [](std::string_view text) { std::cerr << "safs-runtime: " << text << '\n'; };
  }
  return config;
}

std::uint64_t random_session() {
  std::random_device device;
  std::uint64_t session = 0;
  while (session == 0) session = (static_cast<std::uint64_t>(device()) << 32) | device();
  return session;
}

}  // namespace

EndpointCore::EndpointCore(EndpointConfig config)
    : config_(with_link(std::move(config))), scheduler_(config_.scheduler) {
  listen_fd_ = listen_tcp(config_.listen);
  if (listen_fd_ < 0) {
    throw std::runtime_error("cannot listen on " + config_.listen.text() + ": " +
                             std::strerror(errno));
  }
  address_ = {config_.listen.host, local_port(listen_fd_)};
  session_ = random_session();
  loop_.add(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); });
}

EndpointCore::~EndpointCore() {
  for (auto& [id, flow] : outgoing_) {
    if (flow.fd >= 0) close(flow.fd);
  }
  for (auto& [id, flow] : incoming_) {
    if (flow.fd >= 0) close(flow.fd);
  }
  for (auto& [fd, connection] : unbound_) close(fd);
  close(listen_fd_);
  // Peers' control channels close their sockets.
}

void EndpointCore::log(const std::string& text) const { config_.log(text); }

wire::Hello EndpointCore::my_hello() const {
  wire::Hello hello;
  hello.capabilities = wire::kCapLeases;
  if (config_.pacing != PacingMode::kUserspace) hello.capabilities |= wire::kCapKernelPacing;
  hello.session = session_;
  hello.downlink_bps = static_cast<std::uint64_t>(config_.downlink_bps);
  hello.listen_port = address_.port;
  return hello;
}

// ---- accepting: the first frame says control (Hello) or data (DataOpen) ----

void EndpointCore::on_accept() {
  for (;;) {
    const int fd = accept_tcp(listen_fd_);
    if (fd < 0) return;
    if (unbound_.size() >= kMaxUnboundConnections) {
      log("refusing a connection from " + remote_host(fd) + ": too many unidentified connections");
      close(fd);
      continue;
    }
    set_no_delay(fd);
    unbound_[fd] = {fd, {}, std::nullopt, monotonic_ns()};
    loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) { on_unbound_readable(fd); });
  }
}

void EndpointCore::on_unbound_readable(int fd) {
  auto it = unbound_.find(fd);
  if (it == unbound_.end()) return;
  UnboundConnection& connection = it->second;
  auto close_unbound = [&](const std::string& reason, bool protocol_error) {
    if (protocol_error) ++stats_.protocol_errors;
    if (!reason.empty()) log("closing connection from " + remote_host(fd) + ": " + reason);
    loop_.remove(fd);
    close(fd);
    unbound_.erase(fd);
  };
  if (connection.data_open) {
    // Parked: not reading until its flow is announced; only a hang-up matters.
    char probe = 0;
    const ssize_t peeked = recv(fd, &probe, 1, MSG_PEEK);
    if (peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      close_unbound("", false);
    }
    return;
  }
  // Read no further than one frame can reach, so a data connection's payload
  // stays in the socket.
  const std::size_t want = wire::kHeaderBytes + wire::kMaxBodyBytes - connection.bytes.size();
  std::vector<std::uint8_t> chunk(want);
  const ssize_t n = recv(fd, chunk.data(), chunk.size(), 0);
  if (n == 0) {
    close_unbound(connection.bytes.empty() ? "" : "truncated first frame",
                  !connection.bytes.empty());
    return;
  }
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) close_unbound("", false);
    return;
  }
  connection.bytes.insert(connection.bytes.end(), chunk.begin(), chunk.begin() + n);
  const wire::DecodeResult result = wire::decode(connection.bytes);
  if (result.status == wire::DecodeStatus::kNeedMore) return;
  if (result.status == wire::DecodeStatus::kInvalid) {
    close_unbound(result.error, true);
    return;
  }
  connection.bytes.erase(
      connection.bytes.begin(),
      connection.bytes.begin() + static_cast<std::ptrdiff_t>(result.consumed_bytes));
  UnboundConnection taken = std::move(connection);
  if (const auto* hello = std::get_if<wire::Hello>(&result.message)) {
    unbound_.erase(it);
    bind_control(taken, *hello);
  } else if (const auto* open = std::get_if<wire::DataOpen>(&result.message)) {
    unbound_.erase(it);
    taken.data_open = *open;
    bind_data(taken);
  } else {
    connection = std::move(taken);
    close_unbound("first frame is neither hello nor data-open", true);
  }
}

void EndpointCore::bind_control(UnboundConnection& connection, const wire::Hello& hello) {
  const PeerId id = next_peer_++;
  Peer& peer = peers_[id];
  peer.id = id;
  peer.name = PeerAddress{remote_host(connection.fd), hello.listen_port}.text();
  peer.control = std::make_unique<ControlChannel>(connection.fd);
  peer.connected = true;
  peer.hello = hello;
  peer.rtt_ns = smoothed_rtt_ns(connection.fd);
  peer_by_name_.try_emplace(peer.name, id);  // a connection of ours to them stays first
  peer_by_session_[hello.session] = id;
  loop_.remove(connection.fd);
  loop_.add(connection.fd, EPOLLIN,
            [this, id](std::uint32_t events) { on_control_event(id, events); });
  send_control(peer, my_hello());
  peer.control->feed(connection.bytes);
  on_control_event(id, EPOLLIN);
  if (peers_.count(id) != 0) try_bind_parked(id);
}

// ---- peers and their control connections ----

Peer* EndpointCore::peer_for(const PeerAddress& address, std::string& error) {
  if (const auto it = peer_by_name_.find(address.text()); it != peer_by_name_.end()) {
    if (const auto peer = peers_.find(it->second); peer != peers_.end()) return &peer->second;
  }
  const int fd = connect_tcp(address);
  if (fd < 0) {
    error = "cannot connect to " + address.text() + ": " + std::strerror(errno);
    return nullptr;
  }
  set_no_delay(fd);
  const PeerId id = next_peer_++;
  Peer& peer = peers_[id];
  peer.id = id;
  peer.name = address.text();
  peer.control = std::make_unique<ControlChannel>(fd);
  peer_by_name_[peer.name] = id;
  loop_.add(fd, EPOLLIN | EPOLLOUT,
            [this, id](std::uint32_t events) { on_control_event(id, events); });
  send_control(peer, my_hello());
  return &peer;
}

void EndpointCore::send_control(Peer& peer, const wire::Message& message) {
  if (!peer.control) return;
  peer.control->send(message);
  if (peer.control->wants_write()) loop_.modify(peer.control->fd(), EPOLLIN | EPOLLOUT);
}

void EndpointCore::on_control_event(PeerId id, std::uint32_t events) {
  auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  const int fd = peer.control->fd();
  if (!peer.connected && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)) != 0) {
    if (const int error = socket_error(fd); error != 0) {
      close_peer(id, std::string("connect failed: ") + std::strerror(error), false);
      return;
    }
    peer.connected = true;
    peer.rtt_ns = smoothed_rtt_ns(fd);
  }
  if (!peer.control->flush()) {
    close_peer(id, "write failed", false);
    return;
  }
  if ((events & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
    std::vector<wire::Message> messages;
    const ControlChannel::ReadResult result = peer.control->read(messages);
    for (const wire::Message& message : messages) {
      dispatch(peer, message);
      if (peers_.count(id) == 0) return;  // the message closed the connection
    }
    if (result == ControlChannel::ReadResult::kProtocolError) {
      close_peer(id, peer.control->error(), true);
      return;
    }
    if (result == ControlChannel::ReadResult::kClosed) {
      close_peer(id, "connection closed by peer", false);
      return;
    }
  }
  if (peer.connected) {
    peer.rtt_ns = smoothed_rtt_ns(fd);
    loop_.modify(fd, EPOLLIN | (peer.control->wants_write() ? EPOLLOUT : 0u));
  }
}

void EndpointCore::dispatch(Peer& peer, const wire::Message& message) {
  if (const auto* hello = std::get_if<wire::Hello>(&message)) {
    if (peer.hello) {
      close_peer(peer.id, "second hello on one connection", true);
      return;
    }
    peer.hello = *hello;
    peer_by_session_[hello->session] = peer.id;
    try_bind_parked(peer.id);
    return;
  }
  if (!peer.hello) {
    close_peer(peer.id, "message before hello", true);
    return;
  }
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, wire::Announce>) {
          on_announce(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Update>) {
          on_update(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Grant>) {
          on_grant(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Done>) {
          on_done(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Error>) {
          if (m.flow == 0) {
            close_peer(peer.id, "peer reported: " + m.reason, false);
          } else {
            on_flow_error(peer, m);
          }
        } else if constexpr (std::is_same_v<T, wire::DataOpen>) {
          close_peer(peer.id, "data-open on a control connection", true);
        }
      },
      message);
}

void EndpointCore::close_peer(PeerId id, const std::string& reason, bool protocol_error) {
  auto it = peers_.find(id);
  if (it == peers_.end()) return;
  Peer& peer = it->second;
  log("closing control connection with " + peer.name + ": " + reason);
  if (protocol_error) {
    ++stats_.protocol_errors;
    wire::Error error;
    error.code = wire::ErrorCode::kMalformed;
    error.reason = reason;
    peer.control->send(error);  // best effort: the connection closes now anyway
  }
  for (auto& [handle, flow] : outgoing_) {
    if (flow.peer == id) fail_outgoing(flow, "peer " + peer.name + ": " + reason);
  }
  std::vector<core::FlowId> incoming;
  for (const auto& [flow_id, flow] : incoming_) {
    if (flow.peer == id) incoming.push_back(flow_id);
  }
  for (core::FlowId flow_id : incoming) drop_incoming(incoming_.at(flow_id), reason);
  if (peer.hello) {
    for (auto u = unbound_.begin(); u != unbound_.end();) {
      if (u->second.data_open && u->second.data_open->session == peer.hello->session) {
        loop_.remove(u->first);
        close(u->first);
        u = unbound_.erase(u);
      } else {
        ++u;
      }
    }
    if (const auto s = peer_by_session_.find(peer.hello->session);
        s != peer_by_session_.end() && s->second == id) {
      peer_by_session_.erase(s);
    }
  }
  if (const auto n = peer_by_name_.find(peer.name); n != peer_by_name_.end() && n->second == id) {
    peer_by_name_.erase(n);
  }
  stats_.control_bytes_sent += peer.control->bytes_sent();
  stats_.control_bytes_received += peer.control->bytes_received();
  loop_.remove(peer.control->fd());
  peers_.erase(it);
}

// ---- the loop ----

void EndpointCore::progress(std::int64_t max_wait_ns) {
  std::int64_t now = monotonic_ns();
  loop_.run_once(std::min(max_wait_ns, next_wake_ns(now) - now));
  now = monotonic_ns();
  if (now - last_tick_ns_ >= kTickNs || max_wait_ns == 0) {
    last_tick_ns_ = now;
    on_tick(now);
  }
}

std::int64_t EndpointCore::next_wake_ns(std::int64_t now_ns) const {
  bool active = !incoming_.empty() || !unbound_.empty();
  for (const auto& [id, flow] : outgoing_) active = active || flow.state == FlowState::kPending;
  return now_ns + (active ? kTickNs : kIdleWaitNs);
}

void EndpointCore::on_tick(std::int64_t now_ns) {
  send_tick(now_ns);
  receive_tick(now_ns);
  std::vector<int> expired;
  for (const auto& [fd, connection] : unbound_) {
    if (now_ns - connection.since_ns > kUnboundTimeoutNs) expired.push_back(fd);
  }
  for (int fd : expired) {
    log("closing connection from " + remote_host(fd) +
        (unbound_.at(fd).data_open ? ": its flow was never announced" : ": no first frame"));
    loop_.remove(fd);
    close(fd);
    unbound_.erase(fd);
  }
}

EndpointStats EndpointCore::stats() const {
  EndpointStats stats = stats_;
  for (const auto& [id, peer] : peers_) {
    stats.control_bytes_sent += peer.control->bytes_sent();
    stats.control_bytes_received += peer.control->bytes_received();
    stats.incoming_buffer_bytes += peer.buffer_bytes;
  }
  stats.peers = peers_.size();
  stats.incoming_flows = incoming_.size();
  return stats;
}

}  // namespace safs::runtime
