// Thin, error-returning wrappers over the socket calls the runtime makes:
// numeric addresses (IPv4 and IPv6), non-blocking TCP, and the options that
// carry SAFS onto kernel TCP (pacing rate, not-sent low-water mark).
#pragma once

#include <sys/socket.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

namespace safs::runtime {

// A peer by numeric address: "127.0.0.1:7000", "[::1]:7000".
struct PeerAddress {
  std::string host;
  std::uint16_t port = 0;
  std::string text() const;
  bool operator==(const PeerAddress&) const = default;
  static std::optional<PeerAddress> parse(const std::string& text);
};

// An endpoint cannot listen where it was told to: "cannot <doing> on
// <address>: <errno's text>" (errno as the failed call left it).
class ListenError : public std::runtime_error {
 public:
  ListenError(const PeerAddress& where, const std::string& doing);
  PeerAddress address;
};

struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

std::optional<SocketAddress> resolve_numeric(const PeerAddress& address);
// 127.0.0.0/8, ::1 or an IPv4-mapped 127.x address.
bool is_loopback(const std::string& host);

// Each returns a non-blocking, close-on-exec socket, or -1 with errno set.
// The kernel caps `backlog` at net.core.somaxconn (4096 since Linux 5.4).
inline constexpr int kDefaultListenBacklog = 1024;
int listen_tcp(const PeerAddress& address, int backlog = kDefaultListenBacklog);
int connect_tcp(const PeerAddress& address);  // connection in progress
int accept_tcp(int listen_fd);

std::uint16_t local_port(int fd);
std::string remote_host(int fd);
// Pending socket error (SO_ERROR), 0 when none.
int socket_error(int fd);

void set_no_delay(int fd);
// Kernel TCP pacing (bytes per second of the flow, ~0 for none). False when
// the kernel refuses it, so the caller paces in user space instead.
bool set_pacing_rate(int fd, std::uint64_t bytes_per_second);
void set_notsent_lowat(int fd, std::uint32_t bytes);
void set_priority(int fd, int priority);
// Smoothed RTT of a TCP socket in nanoseconds (TCP_INFO), 0 when unknown.
std::int64_t smoothed_rtt_ns(int fd);

}  // namespace safs::runtime
