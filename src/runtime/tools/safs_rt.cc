// safs-rt: send and receive over the SAFS runtime, or over plain TCP for
// comparison. Used by scripts/netns-testbed.sh; prints one key=value line per
// finished transfer. Exit codes: 0 done, 1 a transfer or connection failed
// (with a message saying which), 2 bad input (naming the option).
#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>

#include "runtime/clock.h"
#include "runtime/endpoint.h"
#include "runtime/tools/option_checks.h"
#include "runtime/tools/payload.h"
#include "runtime/tools/plain_tcp.h"
#include "version/version.h"

namespace {

using namespace safs::runtime;
using safs::rt::BadInput;

constexpr double kBitsPerMbit = 1e6;
// Beyond any NIC (10 Tbit/s), and far from overflowing the wire's u64.
constexpr double kMaxDownlinkMbps = 1e7;
// The receiver treats slack beyond about 11 days as no deadline.
constexpr double kMaxSlackMs = 1e9;
// A sender waits this long for its flow at most (a silent receiver fails it
// after EndpointLimits::silent_peer_timeout_ns).
constexpr std::int64_t kSendTimeoutNs = 600 * kNsPerSecond;

// Who this endpoint trusts: the job key from --key-file, else SAFS_JOB_KEY or
// SAFS_JOB_KEY_FILE (never a key on the command line, where ps shows it), or
// no key at all with --insecure-loopback-only.
// Which member it is: --member-key (else SAFS_MEMBER_KEY_FILE), checked
// against --roster (else SAFS_ROSTER_FILE); without a roster, peers are
// known by address (docs/security.md).
struct KeyOptions {
  std::string key_file;
  std::string member_key_file;
  std::string roster_file;
  bool insecure_loopback_only = false;
};

std::string option_or_environment(const std::string& option, const char* variable) {
  if (!option.empty()) return option;
  const char* value = std::getenv(variable);
  return value == nullptr ? std::string() : value;
}

SecurityConfig security_from(const KeyOptions& options) {
  SecurityConfig security;
  security.insecure_loopback_only = options.insecure_loopback_only;
  std::string error;
  security.job_key = options.key_file.empty() ? job_key_from_environment(error)
                                              : read_job_key_file(options.key_file, error);
  if (!error.empty()) throw BadInput(error);
  if (!security.job_key && !security.insecure_loopback_only) {
    throw BadInput(std::string("no job key: set ") + kJobKeyVariable + " or " +
                   kJobKeyFileVariable +
                   ", or pass --key-file (or --insecure-loopback-only on loopback)");
  }
  const std::string member_file =
      option_or_environment(options.member_key_file, kMemberKeyFileVariable);
  if (!member_file.empty()) {
    security.member = read_member_key_file(member_file, error);
    if (!security.member) throw BadInput("--member-key: " + error);
  }
  const std::string roster_file = option_or_environment(options.roster_file, kRosterFileVariable);
  if (!roster_file.empty()) {
    const std::optional<Roster> roster = read_roster_file(roster_file, error);
    if (!roster) throw BadInput("--roster: " + error);
    if (!security.member) {
      throw BadInput("--roster needs --member-key: peers holding the roster check who this is");
    }
    security.roster = *roster;
  }
  return security;
}

// Without a key, every address this endpoint uses must be on loopback.
void check_loopback(const SecurityConfig& security, const char* option, const std::string& text) {
  if (security.insecure_loopback_only && !is_loopback(PeerAddress::parse(text)->host)) {
    throw BadInput(std::string(option) + " " + text +
                   ": not a loopback address (--insecure-loopback-only uses loopback only)");
  }
}

// Options already passed host_port(): parse cannot fail.
PeerAddress address(const std::string& text) { return *PeerAddress::parse(text); }

EndpointConfig endpoint_config(const std::string& listen, const SecurityConfig& security) {
  EndpointConfig config;
  config.security = security;
  config.listen = address(listen);
  return config;
}

// The endpoint, or BadInput naming the option whose address it cannot use.
Endpoint open_endpoint(const EndpointConfig& config) {
  try {
    return Endpoint(config);
  } catch (const std::invalid_argument& refused) {  // a configuration the endpoint refuses
    throw BadInput(refused.what());
  } catch (const ListenError& cannot) {
    throw BadInput((cannot.address == config.listen ? "--listen: " : "--metrics: ") +
                   std::string(cannot.what()));
  }
}

struct RecvOptions {
  std::string listen;
  double downlink_mbps = 1000;
  int count = 1;
  bool urgent_first = false;
  bool slack_adaptive = false;
  bool adapt_budget = false;
  bool no_edf_when_short = false;
  std::string metrics;
};

int run_recv(const RecvOptions& o, const SecurityConfig& security) {
  EndpointConfig config = endpoint_config(o.listen, security);
  if (!o.metrics.empty()) config.metrics_listen = address(o.metrics);
  config.scheduler.allocator.urgent_first = o.urgent_first;
  config.scheduler.allocator.slack_adaptive = o.slack_adaptive;
  config.shortfall_response.lower_budget = o.adapt_budget;
  config.shortfall_response.urgent_first = !o.no_edf_when_short;
  config.downlink_bps = o.downlink_mbps * kBitsPerMbit;
  Endpoint endpoint = open_endpoint(config);
  // Where senders reach it (the port chosen when --listen said 0).
  std::printf("recv-ready address=%s\n", endpoint.address().text().c_str());
  std::fflush(stdout);
  int received = 0;
  const std::int64_t start = monotonic_ns();
  endpoint.on_message([&](const IncomingMessage& m) {
    ++received;
    std::printf("recv tag=%llu bytes=%zu checksum=%016llx at_ms=%.1f%s%s\n",
                static_cast<unsigned long long>(m.tag), m.data.size(),
                static_cast<unsigned long long>(safs::rt::checksum(m.data)),
                static_cast<double>(monotonic_ns() - start) / 1e6,
                m.member.empty() ? "" : " member=", m.member.c_str());
    std::fflush(stdout);
  });
  while (received < o.count) endpoint.progress(100 * kNsPerMs);
  // Let the last DONE messages leave before the sockets close.
  for (int i = 0; i < 50; ++i) endpoint.progress(kNsPerMs);
  const EndpointStats stats = endpoint.stats();
  std::printf(
      "recv-summary messages=%d control_bytes_sent=%llu control_bytes_received=%llu "
      "grants_sent=%llu data_bytes=%llu min_budget_mbps=%.0f budget_changes=%llu "
      "shortfall_episodes=%llu quota_demotions=%llu\n",
      received, static_cast<unsigned long long>(stats.control_bytes_sent),
      static_cast<unsigned long long>(stats.control_bytes_received),
      static_cast<unsigned long long>(stats.grants_sent),
      static_cast<unsigned long long>(stats.data_bytes_received), stats.min_budget_bps / 1e6,
      static_cast<unsigned long long>(stats.budget_changes),
      static_cast<unsigned long long>(stats.shortfall_episodes),
      static_cast<unsigned long long>(stats.quota_demotions));
  return 0;
}

struct SendOptions {
  std::string to;
  std::string listen;
  std::uint64_t bytes = 1 << 20;
  double slack_ms = 0;
  std::uint64_t tag = 1;
  bool no_contention_fallback = false;
};

int run_send(const SendOptions& o, const SecurityConfig& security) {
  EndpointConfig config = endpoint_config(o.listen, security);
  config.contention_fallback.enabled = !o.no_contention_fallback;
  Endpoint endpoint = open_endpoint(config);
  const auto data = safs::rt::pattern(o.bytes, o.tag);
  const std::int64_t start = monotonic_ns();
  const FlowHint hint =
      o.slack_ms > 0 ? FlowHint::urgent_within(static_cast<std::int64_t>(o.slack_ms * 1e6), o.tag)
                     : FlowHint::background(o.tag);
  // When the flow was first reported at risk, in ms from its send (-1: never).
  double risk_ms = -1;
  endpoint.on_risk([&](const FlowRisk&) {
    if (risk_ms < 0) risk_ms = static_cast<double>(monotonic_ns() - start) / 1e6;
  });
  const FlowHandle flow = endpoint.send(address(o.to), data, hint);
  const FlowStatus status = endpoint.wait(flow, kSendTimeoutNs);
  const double fct_ms = static_cast<double>(monotonic_ns() - start) / 1e6;
  const bool done = status.state == FlowState::kDone;
  const std::string error = done ? "" : status.error.empty() ? "no answer in time" : status.error;
  const EndpointStats stats = endpoint.stats();
  std::printf(
      "send mode=safs tag=%llu bytes=%llu fct_ms=%.1f deadline_ms=%.1f met=%d risk=%d "
      "risk_ms=%.1f state=%s checksum=%016llx control_bytes_sent=%llu control_bytes_received=%llu "
      "grants=%llu contended_paths=%llu%s%s\n",
      static_cast<unsigned long long>(o.tag), static_cast<unsigned long long>(o.bytes), fct_ms,
      o.slack_ms, done && safs::rt::deadline_met(fct_ms, o.slack_ms), risk_ms >= 0 ? 1 : 0, risk_ms,
      done ? "done" : "failed", static_cast<unsigned long long>(safs::rt::checksum(data)),
      static_cast<unsigned long long>(stats.control_bytes_sent),
      static_cast<unsigned long long>(stats.control_bytes_received),
      static_cast<unsigned long long>(stats.grants_received),
      static_cast<unsigned long long>(stats.contended_paths), done ? "" : " error=", error.c_str());
  if (done) return 0;
  std::fprintf(stderr, "safs-rt send: the transfer to %s failed: %s\n", o.to.c_str(),
               error.c_str());
  return safs::rt::kExitFailed;
}

// A new member key, written where nobody else can read it.
int write_member_key(const std::string& name, const std::string& path) {
  if (!wire::valid_member_name(name)) {
    throw BadInput("--name '" + name + "': expected 1-64 of [A-Za-z0-9._-]");
  }
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw BadInput("--out " + path + ": " + std::strerror(errno));
  const MemberKey key = generate_member_key(name);
  const std::string line = member_key_line(key) + "\n";
  const bool written = write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size());
  close(fd);
  if (!written) throw std::runtime_error(std::strerror(errno));
  std::printf("%s\n", roster_line(key).c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"safs-rt: transfers over the SAFS runtime or plain TCP"};
  app.require_subcommand(1);
  app.set_version_flag("--version", safs::version_line("safs-rt"),
                       "Print the version and source commit");
  KeyOptions keys;
  app.add_option("--key-file", keys.key_file,
                 "the job key: 32 bytes or 64 hex digits, mode 600 (default: $SAFS_JOB_KEY, "
                 "$SAFS_JOB_KEY_FILE)");
  app.add_flag("--insecure-loopback-only", keys.insecure_loopback_only,
               "no key, loopback addresses only (tests)");
  app.add_option("--member-key", keys.member_key_file,
                 "this member's key file, from keygen (default: $SAFS_MEMBER_KEY_FILE)");
  app.add_option("--roster", keys.roster_file,
                 "the job's members and their public keys, one 'NAME KEY' a line; peers must "
                 "be listed (default: $SAFS_ROSTER_FILE)");
  bool plain = false;

  RecvOptions recv_options;
  auto* recv = app.add_subcommand("recv", "receive COUNT messages, print each");
  recv->add_option("--listen", recv_options.listen, "host:port to listen on")
      ->required()
      ->check(safs::rt::host_port(false));
  recv->add_option("--downlink-mbps", recv_options.downlink_mbps,
                   "what the receiver allocates (Mbit/s)")
      ->check(safs::rt::number_in(0, false, kMaxDownlinkMbps, "Mbit/s"));
  recv->add_option("--count", recv_options.count, "messages to receive (-1: forever, plain only)")
      ->check(safs::rt::integer_in(-1, INT32_MAX, "-1: forever, with --plain"));
  recv->add_flag("--plain", plain, "plain TCP instead of SAFS");
  recv->add_option("--metrics", recv_options.metrics,
                   "host:port serving Prometheus counters (local)")
      ->check(safs::rt::host_port(false));
  recv->add_flag("--urgent-first", recv_options.urgent_first,
                 "urgent flows take all they can (EDF at line rate)");
  recv->add_flag("--slack-adaptive", recv_options.slack_adaptive,
                 "urgent flows with little slack left or under one BDP take all they can, "
                 "the others just in time");
  recv->add_flag("--adapt-budget", recv_options.adapt_budget,
                 "lower the budget when flows get less than granted (unmanaged traffic)");
  recv->add_flag("--no-edf-when-short", recv_options.no_edf_when_short,
                 "stay just in time when flows get less than granted behind a full downlink");

  SendOptions send_options;
  auto* send = app.add_subcommand("send", "send one message and wait for its completion");
  send->add_option("--to", send_options.to, "receiver host:port")
      ->required()
      ->check(safs::rt::host_port(true));
  send->add_option("--bytes", send_options.bytes, "message size")
      ->check(safs::rt::integer_in(1, PeerLimits{}.max_message_bytes,
                                   "a receiver's default per-message limit"));
  send->add_option("--slack-ms", send_options.slack_ms,
                   "no-bubble deadline from now (0: background)")
      ->check(safs::rt::number_in(0, true, kMaxSlackMs, "ms"));
  send->add_option("--tag", send_options.tag, "message tag")
      ->check(safs::rt::integer_in(0, UINT64_MAX, ""));
  auto* send_listen = send->add_option("--listen", send_options.listen,
                                       "this endpoint's host:port (default: any port, on "
                                       "loopback with --insecure-loopback-only)")
                          ->check(safs::rt::host_port(false));
  send->add_flag("--plain", plain, "plain TCP instead of SAFS");
  send->add_flag("--no-contention-fallback", send_options.no_contention_fallback,
                 "keep the flow paced at its grant when someone else fills the bottleneck");

  std::string bulk_to;
  auto* bulk = app.add_subcommand("bulk", "an unmanaged TCP flow that sends until killed");
  bulk->add_option("--to", bulk_to, "receiver host:port")
      ->required()
      ->check(safs::rt::host_port(true));

  std::string keygen_name, keygen_out;
  auto* keygen = app.add_subcommand(
      "keygen", "write a new member key file (mode 600) and print its roster line");
  keygen->add_option("--name", keygen_name, "the member's name: 1-64 of [A-Za-z0-9._-]")
      ->required();
  keygen->add_option("--out", keygen_out, "the key file to create (must not exist)")->required();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : safs::rt::kExitBadInput;
  }

  const std::string command = app.get_subcommands().front()->get_name();
  std::string doing = "starting";  // what the handler below says it was doing
  try {
    if (*recv) {
      if (recv_options.count == 0) throw BadInput("--count: expected at least 1 message, got 0");
      if (plain) {
        doing = "receiving plain TCP on " + recv_options.listen;
        return safs::rt::plain_recv(address(recv_options.listen), recv_options.count);
      }
      if (recv_options.count < 0) throw BadInput("--count -1 (forever) needs --plain");
      const SecurityConfig security = security_from(keys);
      check_loopback(security, "--listen", recv_options.listen);
      doing = "receiving on " + recv_options.listen;
      return run_recv(recv_options, security);
    }
    if (*send) {
      doing = "sending " + std::to_string(send_options.bytes) + " bytes to " + send_options.to;
      if (plain) {
        return safs::rt::plain_send(address(send_options.to), send_options.bytes,
                                    send_options.slack_ms, send_options.tag);
      }
      const SecurityConfig security = security_from(keys);
      if (send_listen->count() == 0) {
        send_options.listen = security.insecure_loopback_only ? "127.0.0.1:0" : "0.0.0.0:0";
      }
      check_loopback(security, "--to", send_options.to);
      check_loopback(security, "--listen", send_options.listen);
      return run_send(send_options, security);
    }
    if (*keygen) {
      doing = "writing " + keygen_out;
      return write_member_key(keygen_name, keygen_out);
    }
    doing = "sending bulk to " + bulk_to;
    return safs::rt::plain_bulk(address(bulk_to));
  } catch (const BadInput& bad) {
    std::cerr << "safs-rt " << command << ": error: " << bad.what() << '\n';
    return safs::rt::kExitBadInput;
  } catch (const std::bad_alloc&) {
    std::cerr << "safs-rt " << command << ": error while " << doing << ": out of memory\n";
    return safs::rt::kExitFailed;
  } catch (const std::exception& e) {
    std::cerr << "safs-rt " << command << ": error while " << doing << ": " << e.what() << '\n';
    return safs::rt::kExitFailed;
  }
}
