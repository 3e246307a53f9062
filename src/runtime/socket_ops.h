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
// SO_PRIORITY (0-6) and the DSCP dscp_for_priority() maps it to (IP_TOS,
// and IPV6_TCLASS on an IPv6 socket): the mark a switch's QoS classifies by.
void set_priority(int fd, int priority);
// SAFS's socket priority as a DSCP (RFC 4594 names): 0 best effort (0);
// background (1) AF11 (10); 2 (a data connection before its first grant)
// AF21 (18); urgent by rank, 3 AF43 (38), 4 AF42 (36), 5 AF41 (34); 6 (the
// control connection) EF (46).
// Every granted flow carries an AF or EF mark, so one filter on those values
// puts SAFS's paced traffic in its own class (scripts/netns-testbed.sh QOS=1).
int dscp_for_priority(int priority);
// What a sender's connections carry before a grant: its control connection
// (announces, updates) EF, a data connection's handshake and unscheduled
// bytes AF21. Left unmarked they would wait behind unmanaged traffic in a
// QoS bottleneck's default queue.
inline constexpr int kControlPriority = 6;
inline constexpr int kUnscheduledPriority = 2;
// Smoothed RTT of a TCP socket in nanoseconds (TCP_INFO), 0 when unknown.
std::int64_t smoothed_rtt_ns(int fd);
// Bytes written on a TCP socket that its peer has not acknowledged
// (SIOCOUTQ: write_seq - snd_una, tcp(7)); -1 when unknown.
std::int64_t unacknowledged_bytes(int fd);
// This network namespace's net.ipv4.tcp_slow_start_after_idle: true when a
// TCP connection idle for longer than its retransmission timeout starts its
// congestion window over (Linux's default); nullopt when unreadable.
std::optional<bool> tcp_restarts_after_idle();

}  // namespace safs::runtime
