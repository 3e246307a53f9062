#include "runtime/socket_ops.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace safs::runtime {
namespace {

void set_flag(int fd, int level, int option, int value) {
  setsockopt(fd, level, option, &value, sizeof value);
}

}  // namespace

std::string PeerAddress::text() const {
  const bool v6 = host.find(':') != std::string::npos;
  return (v6 ? "[" + host + "]" : host) + ":" + std::to_string(port);
}

ListenError::ListenError(const PeerAddress& where, const std::string& doing)
    : std::runtime_error("cannot " + doing + " on " + where.text() + ": " + std::strerror(errno)),
      address(where) {}

std::optional<PeerAddress> PeerAddress::parse(const std::string& text) {
  std::string host;
  std::string port;
  if (!text.empty() && text.front() == '[') {
    const auto close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return std::nullopt;
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string::npos) return std::nullopt;
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
  }
  if (host.empty() || port.empty() || port.size() > 5) return std::nullopt;
  unsigned long value = 0;
  for (char c : port) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned long>(c - '0');
  }
  if (value > 65535) return std::nullopt;
  PeerAddress address{host, static_cast<std::uint16_t>(value)};
  if (!resolve_numeric(address)) return std::nullopt;
  return address;
}

std::optional<SocketAddress> resolve_numeric(const PeerAddress& address) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(address.port);
  if (getaddrinfo(address.host.c_str(), port.c_str(), &hints, &found) != 0) return std::nullopt;
  SocketAddress result;
  std::memcpy(&result.storage, found->ai_addr, found->ai_addrlen);
  result.length = found->ai_addrlen;
  freeaddrinfo(found);
  return result;
}

bool is_loopback(const std::string& host) {
  in_addr v4{};
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, host.c_str(), &v6) != 1) return false;
  if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
  return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
}

namespace {

// A non-blocking TCP socket for `address`, or -1 with errno set (EINVAL for
// an address that is not numeric).
int tcp_socket_for(const PeerAddress& address, std::optional<SocketAddress>& resolved) {
  resolved = resolve_numeric(address);
  if (!resolved) {
    errno = EINVAL;
    return -1;
  }
  return socket(resolved->storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
}

// Closes `fd` keeping errno, and returns -1.
int fail_closing(int fd) {
  const int saved = errno;
  close(fd);
  errno = saved;
  return -1;
}

}  // namespace

int listen_tcp(const PeerAddress& address, int backlog) {
  std::optional<SocketAddress> resolved;
  const int fd = tcp_socket_for(address, resolved);
  if (fd < 0) return -1;
  set_flag(fd, SOL_SOCKET, SO_REUSEADDR, 1);
  if (bind(fd, reinterpret_cast<const sockaddr*>(&resolved->storage), resolved->length) != 0 ||
      listen(fd, backlog) != 0) {
    return fail_closing(fd);
  }
  return fd;
}

int connect_tcp(const PeerAddress& address) {
  std::optional<SocketAddress> resolved;
  const int fd = tcp_socket_for(address, resolved);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<const sockaddr*>(&resolved->storage), resolved->length) != 0 &&
      errno != EINPROGRESS) {
    return fail_closing(fd);
  }
  return fd;
}

int accept_tcp(int listen_fd) {
  return accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
}

std::uint16_t local_port(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return 0;
  if (storage.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_port);
  }
  return ntohs(reinterpret_cast<const sockaddr_in*>(&storage)->sin_port);
}

std::string remote_host(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0) return {};
  char text[INET6_ADDRSTRLEN] = {};
  if (storage.ss_family == AF_INET6) {
    inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(&storage)->sin6_addr, text,
              sizeof text);
  } else {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(&storage)->sin_addr, text,
              sizeof text);
  }
  return text;
}

int socket_error(int fd) {
  int error = 0;
  socklen_t length = sizeof error;
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) != 0) return errno;
  return error;
}

void set_no_delay(int fd) { set_flag(fd, IPPROTO_TCP, TCP_NODELAY, 1); }

bool set_pacing_rate(int fd, std::uint64_t bytes_per_second) {
  return setsockopt(fd, SOL_SOCKET, SO_MAX_PACING_RATE, &bytes_per_second,
                    sizeof bytes_per_second) == 0;
}

void set_notsent_lowat(int fd, std::uint32_t bytes) {
  setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof bytes);
}

int dscp_for_priority(int priority) {
  constexpr int kDscp[] = {0, 10, 18, 38, 36, 34, 46};  // see socket_ops.h
  return kDscp[std::clamp(priority, 0, 6)];
}

void set_priority(int fd, int priority) {
  // The DSCP sits above the two ECN bits, which TCP keeps its own.
  const int tos = dscp_for_priority(priority) << 2;
  int domain = AF_INET;
  socklen_t length = sizeof domain;
  getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &length);
  if (domain == AF_INET6) set_flag(fd, IPPROTO_IPV6, IPV6_TCLASS, tos);
  set_flag(fd, IPPROTO_IP, IP_TOS, tos);  // an IPv4 socket, or IPv4-mapped on IPv6
  // After IP_TOS, which sets the socket's priority from the TOS byte
  // (rt_tos2priority) and would overwrite ours.
  set_flag(fd, SOL_SOCKET, SO_PRIORITY, priority);
}

std::int64_t unacknowledged_bytes(int fd) {
  int bytes = 0;
  return ioctl(fd, SIOCOUTQ, &bytes) == 0 ? bytes : -1;
}

std::optional<bool> tcp_restarts_after_idle() {
  const int fd = open("/proc/sys/net/ipv4/tcp_slow_start_after_idle", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return std::nullopt;
  char value = 0;
  const ssize_t n = read(fd, &value, 1);
  close(fd);
  if (n != 1 || (value != '0' && value != '1')) return std::nullopt;
  return value == '1';
}

std::int64_t smoothed_rtt_ns(int fd) {
  tcp_info info{};
  socklen_t length = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &length) != 0) return 0;
  return static_cast<std::int64_t>(info.tcpi_rtt) * 1000;  // tcpi_rtt is in microseconds
}

}  // namespace safs::runtime
