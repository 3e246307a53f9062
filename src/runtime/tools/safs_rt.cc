// safs-rt: send and receive over the SAFS runtime, or over plain TCP for
// comparison. Used by scripts/netns-testbed.sh; prints one key=value line per
// finished transfer.
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/clock.h"
#include "runtime/endpoint.h"
#include "runtime/socket_ops.h"

namespace {

using namespace safs::runtime;

constexpr double kBitsPerMbit = 1e6;

std::uint64_t checksum(std::span<const std::byte> bytes) {  // FNV-1a, as the tests
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (std::byte b : bytes) hash = (hash ^ static_cast<std::uint8_t>(b)) * 0x100000001b3ull;
  return hash;
}

std::vector<std::byte> pattern(std::uint64_t bytes, std::uint64_t seed) {
  std::vector<std::byte> data(bytes);
  std::uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& b : data) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<std::byte>(x);
  }
  return data;
}

// Who this endpoint trusts: the job key from --key-file, else SAFS_JOB_KEY or
// SAFS_JOB_KEY_FILE (never a key on the command line, where ps shows it), or
// no key at all with --insecure-loopback-only.
struct KeyOptions {
  std::string key_file;
  bool insecure_loopback_only = false;
};

SecurityConfig security_or_exit(const KeyOptions& options) {
  SecurityConfig security;
  security.insecure_loopback_only = options.insecure_loopback_only;
  std::string error;
  security.job_key = options.key_file.empty() ? job_key_from_environment(error)
                                              : read_job_key_file(options.key_file, error);
  if (!error.empty()) {
    std::cerr << "safs-rt: " << error << '\n';
    std::exit(2);
  }
  if (!security.job_key && !security.insecure_loopback_only) {
    std::cerr << "safs-rt: no job key: set " << kJobKeyVariable << " or " << kJobKeyFileVariable
              << ", or pass --key-file (or --insecure-loopback-only on loopback)\n";
    std::exit(2);
  }
  return security;
}

PeerAddress parse_or_exit(const std::string& text) {
  const auto address = PeerAddress::parse(text);
  if (!address) {
    std::cerr << "safs-rt: not a numeric host:port: " << text << '\n';
    std::exit(2);
  }
  return *address;
}

// Blocking helpers for the plain-TCP baseline.
int blocking(int fd) {
  const int flags = fcntl(fd, F_GETFL);
  fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

int run_recv(const std::string& listen, double downlink_mbps, int count, bool urgent_first,
             const SecurityConfig& security, const std::string& metrics) {
  EndpointConfig config;
  config.security = security;
  if (!metrics.empty()) config.metrics_listen = parse_or_exit(metrics);
  config.scheduler.allocator.urgent_first = urgent_first;
  config.listen = parse_or_exit(listen);
  config.downlink_bps = downlink_mbps * kBitsPerMbit;
  Endpoint endpoint(config);
  int received = 0;
  const std::int64_t start = monotonic_ns();
  endpoint.on_message([&](const IncomingMessage& m) {
    ++received;
    std::printf("recv tag=%llu bytes=%zu checksum=%016llx at_ms=%.1f\n",
                static_cast<unsigned long long>(m.tag), m.data.size(),
                static_cast<unsigned long long>(checksum(m.data)),
                static_cast<double>(monotonic_ns() - start) / 1e6);
    std::fflush(stdout);
  });
  while (received < count) endpoint.progress(100 * kNsPerMs);
  // Let the last DONE messages leave before the sockets close.
  for (int i = 0; i < 50; ++i) endpoint.progress(kNsPerMs);
  const EndpointStats stats = endpoint.stats();
  std::printf(
      "recv-summary messages=%d control_bytes_sent=%llu control_bytes_received=%llu "
      "grants_sent=%llu data_bytes=%llu\n",
      received, static_cast<unsigned long long>(stats.control_bytes_sent),
      static_cast<unsigned long long>(stats.control_bytes_received),
      static_cast<unsigned long long>(stats.grants_sent),
      static_cast<unsigned long long>(stats.data_bytes_received));
  return 0;
}

int run_send(const std::string& to, std::uint64_t bytes, double slack_ms, std::uint64_t tag,
             const std::string& listen, const SecurityConfig& security) {
  EndpointConfig config;
  config.security = security;
  config.listen = parse_or_exit(listen);
  Endpoint endpoint(config);
  const auto data = pattern(bytes, tag);
  const std::int64_t start = monotonic_ns();
  const FlowHint hint =
      slack_ms > 0 ? FlowHint::urgent_within(static_cast<std::int64_t>(slack_ms * 1e6), tag)
                   : FlowHint::background(tag);
  bool risk = false;
  endpoint.on_risk([&](const FlowRisk&) { risk = true; });
  const FlowHandle flow = endpoint.send(parse_or_exit(to), data, hint);
  const FlowStatus status = endpoint.wait(flow, 600 * kNsPerSecond);
  const double fct_ms = static_cast<double>(monotonic_ns() - start) / 1e6;
  const EndpointStats stats = endpoint.stats();
  std::printf(
      "send mode=safs tag=%llu bytes=%llu fct_ms=%.1f deadline_ms=%.1f met=%d risk=%d "
      "state=%s checksum=%016llx control_bytes_sent=%llu control_bytes_received=%llu "
      "grants=%llu%s%s\n",
      static_cast<unsigned long long>(tag), static_cast<unsigned long long>(bytes), fct_ms,
      slack_ms, slack_ms <= 0 || fct_ms <= slack_ms, risk ? 1 : 0,
      status.state == FlowState::kDone ? "done" : "failed",
      static_cast<unsigned long long>(checksum(data)),
      static_cast<unsigned long long>(stats.control_bytes_sent),
      static_cast<unsigned long long>(stats.control_bytes_received),
      static_cast<unsigned long long>(stats.grants_received),
      status.error.empty() ? "" : " error=", status.error.c_str());
  return status.state == FlowState::kDone ? 0 : 1;
}

// Plain TCP: the receiver reads each connection to its end and closes it;
// the sender's transfer is complete when it sees that close.
int run_plain_recv(const std::string& listen, int count) {
  const int listener = blocking(listen_tcp(parse_or_exit(listen)));
  if (listener < 0) return 1;
  std::vector<char> buffer(1 << 20);
  for (int i = 0; i < count || count < 0; ++i) {
    const int fd = accept(listener, nullptr, nullptr);
    if (fd < 0) return 1;
    if (fork() == 0) {  // one process per connection: the baseline has no event loop
      std::uint64_t total = 0;
      for (ssize_t n; (n = recv(fd, buffer.data(), buffer.size(), 0)) > 0;) total += n;
      close(fd);
      _exit(0);
    }
    close(fd);
  }
  return 0;
}

int run_plain_send(const std::string& to, std::uint64_t bytes, double slack_ms, std::uint64_t tag,
                   bool forever) {
  const int fd = blocking(connect_tcp(parse_or_exit(to)));
  if (fd < 0) return 1;
  // Wait for the connection (connect_tcp returned while it was in progress).
  while (socket_error(fd) == 0 && remote_host(fd).empty()) usleep(100);
  const auto data = pattern(forever ? (1u << 20) : bytes, tag);
  const std::int64_t start = monotonic_ns();
  std::uint64_t sent = 0;
  while (forever || sent < bytes) {
    const std::size_t offset = forever ? 0 : static_cast<std::size_t>(sent);
    const ssize_t n = send(fd, data.data() + offset, data.size() - offset, MSG_NOSIGNAL);
    if (n <= 0) return forever ? 0 : 1;
    sent += static_cast<std::uint64_t>(n);
  }
  shutdown(fd, SHUT_WR);
  char byte;
  while (recv(fd, &byte, 1, 0) > 0) {
  }
  const double fct_ms = static_cast<double>(monotonic_ns() - start) / 1e6;
  std::printf("send mode=plain tag=%llu bytes=%llu fct_ms=%.1f deadline_ms=%.1f met=%d\n",
              static_cast<unsigned long long>(tag), static_cast<unsigned long long>(bytes), fct_ms,
              slack_ms, slack_ms <= 0 || fct_ms <= slack_ms);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"safs-rt: transfers over the SAFS runtime or plain TCP"};
  app.require_subcommand(1);
  std::string listen = "0.0.0.0:0";
  std::string to;
  double downlink_mbps = 1000;
  int count = 1;
  std::uint64_t bytes = 1 << 20;
  double slack_ms = 0;
  std::uint64_t tag = 1;
  bool plain = false;
  bool urgent_first = false;
  std::string metrics;
  KeyOptions keys;
  app.add_option("--key-file", keys.key_file,
                 "the job key: 32 bytes or 64 hex digits, mode 600 (default: $SAFS_JOB_KEY, "
                 "$SAFS_JOB_KEY_FILE)");
  app.add_flag("--insecure-loopback-only", keys.insecure_loopback_only,
               "no key, loopback addresses only (tests)");

  auto* recv = app.add_subcommand("recv", "receive COUNT messages, print each");
  recv->add_option("--listen", listen, "host:port to listen on")->required();
  recv->add_option("--downlink-mbps", downlink_mbps, "what the receiver allocates (Mbit/s)");
  recv->add_option("--count", count, "messages to receive (-1: forever, plain only)");
  recv->add_flag("--plain", plain, "plain TCP instead of SAFS");
  recv->add_option("--metrics", metrics, "host:port serving Prometheus counters (local)");
  recv->add_flag("--urgent-first", urgent_first,
                 "urgent flows take all they can (EDF at line rate)");

  auto* send = app.add_subcommand("send", "send one message and wait for its completion");
  send->add_option("--to", to, "receiver host:port")->required();
  send->add_option("--bytes", bytes, "message size");
  send->add_option("--slack-ms", slack_ms, "no-bubble deadline from now (0: background)");
  send->add_option("--tag", tag, "message tag");
  send->add_option("--listen", listen, "this endpoint's host:port");
  send->add_flag("--plain", plain, "plain TCP instead of SAFS");

  auto* bulk = app.add_subcommand("bulk", "an unmanaged TCP flow that sends until killed");
  bulk->add_option("--to", to, "receiver host:port")->required();

  CLI11_PARSE(app, argc, argv);
  try {
    if (*recv) {
      return plain ? run_plain_recv(listen, count)
                   : run_recv(listen, downlink_mbps, count, urgent_first, security_or_exit(keys),
                              metrics);
    }
    if (*send) {
      return plain ? run_plain_send(to, bytes, slack_ms, tag, false)
                   : run_send(to, bytes, slack_ms, tag, listen, security_or_exit(keys));
    }
  } catch (const std::invalid_argument& bad) {  // a configuration the endpoint refuses
    std::cerr << "safs-rt: " << bad.what() << '\n';
    return 2;
  }
  return run_plain_send(to, 0, 0, 0, true);
}
