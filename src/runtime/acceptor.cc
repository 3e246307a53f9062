#include "runtime/acceptor.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "runtime/clock.h"

namespace safs::runtime {
namespace {

// A connection's first frame is a Hello or a DataOpen: at most this long.
constexpr std::size_t kMaxFirstFrameBytes = wire::kHeaderBytes + wire::kMaxBodyBytes;

// Whether a whole frame is waiting unread on `fd` (looked at, not taken).
bool whole_frame_waiting(int fd) {
  std::array<std::uint8_t, kMaxFirstFrameBytes> waiting{};
  const ssize_t peeked = recv(fd, waiting.data(), waiting.size(), MSG_PEEK | MSG_DONTWAIT);
  return peeked > 0 && static_cast<std::size_t>(peeked) >=
                           wire::frame_bytes({waiting.data(), static_cast<std::size_t>(peeked)});
}

}  // namespace

Acceptor::Acceptor(EventLoop& loop, const EndpointConfig& config, Events& events)
    : loop_(loop), config_(config), events_(events) {
  listen_fd_ = listen_tcp(config_.listen, config_.endpoint_limits.listen_backlog);
  if (listen_fd_ < 0) throw ListenError(config_.listen, "listen");
  address_ = {config_.listen.host, local_port(listen_fd_)};
  loop_.add(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); });
  reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
}

Acceptor::~Acceptor() {
  for (auto& [fd, connection] : unbound_) close(fd);
  for (auto& [fd, connection] : kept_) close(fd);
  close(listen_fd_);
  if (reserve_fd_ >= 0) close(reserve_fd_);
}

void Acceptor::on_accept() {
  for (;;) {
    const int fd = accept_tcp(listen_fd_);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) on_out_of_descriptors();
      return;
    }
    if (config_.security.insecure_loopback_only && !is_loopback(remote_host(fd))) {
      config_.log("refusing a connection from " + remote_host(fd) +
                  ": insecure_loopback_only accepts loopback only");
      close(fd);
      continue;
    }
    if (unbound_.size() >= config_.endpoint_limits.max_unidentified_connections) {
      evict_oldest("too many unidentified connections");
    }
    set_no_delay(fd);
    unbound_[fd] = {fd, {}, std::nullopt, monotonic_ns()};
    loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) { on_readable(fd); });
  }
}

bool Acceptor::evict_oldest(const std::string& why) {
  const auto oldest = std::min_element(
      unbound_.begin(), unbound_.end(),
      [](const auto& a, const auto& b) { return a.second.since_ns < b.second.since_ns; });
  if (oldest == unbound_.end()) return false;
  ++stats_.refused_connections;
  close_unbound(oldest->first, why + ": closed the oldest");
  return true;
}

// Out of file descriptors (EMFILE, ENFILE). The pending connection stays
// readable on the listening socket, so level-triggered epoll would call
// again at once: make room by closing the oldest unidentified connection
// (or the oldest unauthenticated peer), or else shed the pending one through the reserve
// descriptor, and pause accepting for a while either way.
void Acceptor::on_out_of_descriptors() {
  if (!evict_oldest("out of file descriptors") && !events_.on_out_of_descriptors() &&
      reserve_fd_ >= 0) {
    close(reserve_fd_);
    const int shed = accept_tcp(listen_fd_);
    if (shed >= 0) {
      ++stats_.refused_connections;
      close(shed);
    }
    reserve_fd_ = open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  config_.log("out of file descriptors: accepting paused for " +
              std::to_string(config_.endpoint_limits.accept_backoff_ns / kNsPerMs) + " ms");
  paused_until_ns_ = monotonic_ns() + config_.endpoint_limits.accept_backoff_ns;
  loop_.modify(listen_fd_, 0);
}

void Acceptor::close_unbound(int fd, const std::string& reason) {
  if (!reason.empty()) config_.log("closing connection from " + remote_host(fd) + ": " + reason);
  loop_.remove(fd);
  close(fd);
  unbound_.erase(fd);
  kept_.erase(fd);
}

void Acceptor::on_readable(int fd) {
  if (const auto it = unbound_.find(fd); it != unbound_.end()) {
    read_first_frame(unbound_, it);
  } else if (const auto kept = kept_.find(fd); kept != kept_.end()) {
    read_first_frame(kept_, kept);
  }
}

void Acceptor::read_first_frame(std::map<int, UnboundConnection>& table,
                                std::map<int, UnboundConnection>::iterator it) {
  const int fd = it->first;
  UnboundConnection& connection = it->second;
  auto protocol_error = [&](const std::string& reason) {
    ++stats_.protocol_errors;
    close_unbound(fd, reason);
  };
  if (connection.data_open) {
    // Parked: not reading until its flow is announced; only a hang-up matters.
    char probe = 0;
    const ssize_t peeked = recv(fd, &probe, 1, MSG_PEEK);
    if (peeked == 0 || (peeked < 0 && errno != EAGAIN && errno != EWOULDBLOCK)) {
      close_unbound(fd, "");
    }
    return;
  }
  // Read exactly one frame, no byte past it: a data connection's payload,
  // or the DataOpen of a flow that follows on it (wire::kCapDataFollow),
  // stays in the socket.
  const std::size_t want =
      std::min(wire::frame_bytes(connection.bytes), kMaxFirstFrameBytes) - connection.bytes.size();
  std::vector<std::uint8_t> chunk(want);
  const ssize_t n = recv(fd, chunk.data(), chunk.size(), 0);
  if (n == 0) {
    if (connection.bytes.empty()) {
      close_unbound(fd, "");
    } else {
      protocol_error("truncated first frame");
    }
    return;
  }
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) close_unbound(fd, "");
    return;
  }
  connection.bytes.insert(connection.bytes.end(), chunk.begin(), chunk.begin() + n);
  const wire::DecodeResult result = wire::decode(connection.bytes);
  if (result.status == wire::DecodeStatus::kNeedMore) {
    if (wire::frame_bytes(connection.bytes) > kMaxFirstFrameBytes) {
      protocol_error("first frame larger than a hello or data-open");
    }
    return;
  }
  if (result.status == wire::DecodeStatus::kInvalid) {
    if (const std::uint16_t version = wire::frame_version(connection.bytes);
        version >= 1 && version < wire::kVersion) {
      const std::vector<std::uint8_t> refusal = wire::older_version_refusal(version);
      // Read what else came, so that the close is a FIN that follows the
      // refusal, not a reset that may overtake it.
      std::array<std::uint8_t, kMaxFirstFrameBytes> rest{};
      [[maybe_unused]] const ssize_t drained = recv(fd, rest.data(), rest.size(), MSG_DONTWAIT);
      [[maybe_unused]] const ssize_t sent =
          send(fd, refusal.data(), refusal.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      protocol_error("a version-" + std::to_string(version) + " peer: version " +
                     std::to_string(wire::kVersion) + " is required");
      return;
    }
    protocol_error(result.error);
    return;
  }
  connection.bytes.erase(
      connection.bytes.begin(),
      connection.bytes.begin() + static_cast<std::ptrdiff_t>(result.consumed_bytes));
  const auto* hello = std::get_if<wire::Hello>(&result.message);
  const auto* open = std::get_if<wire::DataOpen>(&result.message);
  if (connection.kept_for != 0) {
    // A kept data connection carries its own control connection's flows only.
    if (open == nullptr) return protocol_error("a kept data connection sent no data-open");
    if (open->connection != connection.kept_for) {
      return protocol_error("a kept data connection named another control connection");
    }
  }
  if (hello != nullptr) {
    UnboundConnection taken = std::move(connection);
    table.erase(it);
    events_.on_control_connection(taken, *hello);
  } else if (open != nullptr) {
    UnboundConnection taken = std::move(connection);
    table.erase(it);
    taken.data_open = *open;
    taken.kept_for = 0;
    taken.since_ns = monotonic_ns();  // a parked one waits for its announce from now
    events_.on_data_connection(taken);
  } else {
    protocol_error("first frame is neither hello nor data-open");
  }
}

// ---- data connections waiting for their announce ----

void Acceptor::park(UnboundConnection& connection) {
  const std::uint64_t control = connection.data_open->connection;
  const auto parked = std::count_if(unbound_.begin(), unbound_.end(), [&](const auto& entry) {
    return entry.second.data_open && entry.second.data_open->connection == control;
  });
  if (parked >= static_cast<std::ptrdiff_t>(config_.limits.max_parked_connections)) {
    config_.log("closing data connection from " + remote_host(connection.fd) +
                ": too many waiting for their announce");
    loop_.remove_and_close(connection.fd);
    return;
  }
  const int fd = connection.fd;
  unbound_[fd] = std::move(connection);
  loop_.modify(fd, 0);  // hang-ups are still reported
}

std::vector<UnboundConnection> Acceptor::take_parked(
    std::uint64_t connection_id, const std::function<bool(std::uint64_t flow)>& announced) {
  std::vector<UnboundConnection> ready;
  for (auto it = unbound_.begin(); it != unbound_.end();) {
    const std::optional<wire::DataOpen>& open = it->second.data_open;
    if (open && open->connection == connection_id && announced(open->flow)) {
      loop_.modify(it->first, EPOLLIN);
      ready.push_back(std::move(it->second));
      it = unbound_.erase(it);
    } else {
      ++it;
    }
  }
  return ready;
}

bool Acceptor::keep(int fd, std::uint64_t connection_id) {
  const auto kept = std::count_if(kept_.begin(), kept_.end(), [&](const auto& entry) {
    return entry.second.kept_for == connection_id;
  });
  // One with a whole frame waiting is not idle: the next flow follows on it
  // (wire::kCapDataFollow), and that frame is read at once, so the flow and
  // parking limits bound it. A partial frame does not count: it could pin
  // a descriptor for ever.
  if (kept >= static_cast<std::ptrdiff_t>(config_.limits.max_idle_data_connections) &&
      !whole_frame_waiting(fd)) {
    return false;
  }
  loop_.remove(fd);
  kept_[fd] = {fd, {}, std::nullopt, monotonic_ns(), connection_id};
  loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) { on_readable(fd); });
  return true;
}

void Acceptor::close_data_connections(std::uint64_t connection_id) {
  for (auto* table : {&unbound_, &kept_}) {
    for (auto it = table->begin(); it != table->end();) {
      const UnboundConnection& connection = it->second;
      if ((connection_id != 0 && connection.kept_for == connection_id) ||
          (connection.data_open && connection.data_open->connection == connection_id)) {
        loop_.remove(it->first);
        close(it->first);
        it = table->erase(it);
      } else {
        ++it;
      }
    }
  }
}

void Acceptor::expire(std::int64_t now_ns) {
  if (paused_until_ns_ != 0 && now_ns >= paused_until_ns_) {
    paused_until_ns_ = 0;
    loop_.modify(listen_fd_, EPOLLIN);
  }
  std::vector<int> expired;
  for (const auto& [fd, connection] : unbound_) {
    if (now_ns - connection.since_ns > config_.endpoint_limits.unidentified_timeout_ns) {
      expired.push_back(fd);
    }
  }
  for (int fd : expired) {
    close_unbound(fd,
                  unbound_.at(fd).data_open ? "its flow was never announced" : "no first frame");
  }
}

}  // namespace safs::runtime
