#include "runtime/tools/plain_tcp.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/clock.h"
#include "runtime/tools/option_checks.h"
#include "runtime/tools/payload.h"

namespace safs::rt {
namespace {

using runtime::PeerAddress;

constexpr int kConnectTimeoutMs = 10'000;

int blocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

int failed(const char* command, const std::string& what) {
  std::fprintf(stderr, "safs-rt %s: %s\n", command, what.c_str());
  return kExitFailed;
}

// A blocking, connected socket to `to`, or -1 after saying why.
int connect_blocking(const char* command, const PeerAddress& to) {
  const int fd = runtime::connect_tcp(to);
  if (fd < 0) {
    failed(command, "cannot connect to " + to.text() + ": " + std::strerror(errno));
    return -1;
  }
  pollfd waiting{fd, POLLOUT, 0};
  const int ready = poll(&waiting, 1, kConnectTimeoutMs);
  const int error = ready == 1 ? runtime::socket_error(fd) : ETIMEDOUT;
  if (error != 0) {
    close(fd);
    failed(command, "cannot connect to " + to.text() + ": " + std::strerror(error));
    return -1;
  }
  return blocking(fd);
}

}  // namespace

int plain_recv(const PeerAddress& listen, int count) {
  const int listener = runtime::listen_tcp(listen);
  if (listener < 0) {
    throw BadInput("--listen: cannot listen on " + listen.text() + ": " + std::strerror(errno));
  }
  blocking(listener);
  std::vector<char> buffer(1 << 20);
  for (int i = 0; i < count || count < 0; ++i) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return failed("recv", std::string("accept failed: ") + std::strerror(errno));
    if (fork() == 0) {  // one process per connection: the baseline has no event loop
      while (recv(fd, buffer.data(), buffer.size(), 0) > 0) {
      }
      close(fd);
      _exit(0);
    }
    close(fd);
  }
  return 0;
}

int plain_send(const PeerAddress& to, std::uint64_t bytes, double slack_ms, std::uint64_t tag) {
  const int fd = connect_blocking("send", to);
  if (fd < 0) return kExitFailed;
  const auto data = pattern(bytes, tag);
  const std::int64_t start = runtime::monotonic_ns();
  std::uint64_t sent = 0;
  while (sent < bytes) {
    const ssize_t n = send(fd, data.data() + sent, data.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      return failed("send", "connection to " + to.text() + " failed after " + std::to_string(sent) +
                                " of " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
    }
    sent += static_cast<std::uint64_t>(n);
  }
  shutdown(fd, SHUT_WR);
  char byte;
  while (recv(fd, &byte, 1, 0) > 0) {
  }
  close(fd);
  const double fct_ms = static_cast<double>(runtime::monotonic_ns() - start) / 1e6;
  std::printf("send mode=plain tag=%llu bytes=%llu fct_ms=%.1f deadline_ms=%.1f met=%d\n",
              static_cast<unsigned long long>(tag), static_cast<unsigned long long>(bytes), fct_ms,
              slack_ms, deadline_met(fct_ms, slack_ms));
  return 0;
}

int plain_bulk(const PeerAddress& to) {
  const int fd = connect_blocking("bulk", to);
  if (fd < 0) return kExitFailed;
  const auto data = pattern(1u << 20, 0);
  for (std::uint64_t sent = 0;;) {
    const ssize_t n = send(fd, data.data(), data.size(), MSG_NOSIGNAL);
    if (n <= 0) {
      close(fd);
      return failed("bulk",
                    "connection to " + to.text() + " ended after " + std::to_string(sent) +
                        " bytes: " + (n == 0 ? std::string("closed") : std::strerror(errno)));
    }
    sent += static_cast<std::uint64_t>(n);
  }
}

}  // namespace safs::rt
