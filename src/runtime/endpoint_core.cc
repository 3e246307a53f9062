#include "runtime/endpoint_core.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <stdexcept>
#include <type_traits>
#include <variant>

#include "runtime/clock.h"

namespace safs::runtime {
namespace {

constexpr std::int64_t kTickNs = kNsPerMs;  // one epoll tick: pacing wake-ups, leases, risk
constexpr std::int64_t kIdleWaitNs = 100 * kNsPerMs;

EndpointConfig checked(EndpointConfig config) {
  config.scheduler.allocator.link_bps = config.downlink_bps;
  if (!config.log) {
    config.log = [](std::string_view text) { std::cerr << "safs-runtime: " << text << '\n'; };
  }
  constexpr double kMaxDownlinkBps = 1e15;  // 1 Pbit/s: the Hello's u64 holds it
  if (!std::isfinite(config.downlink_bps) || config.downlink_bps <= 0 ||
      config.downlink_bps > kMaxDownlinkBps) {
    throw std::invalid_argument("downlink_bps must be above 0 and at most 1e15, got " +
                                std::to_string(config.downlink_bps));
  }
  const UplinkSharing& uplink = config.uplink;
  if (!std::isfinite(uplink.uplink_bps) || uplink.uplink_bps < 0 ||
      uplink.uplink_bps > kMaxDownlinkBps) {
    throw std::invalid_argument("uplink_bps must be 0 (unknown) or above, at most 1e15, got " +
                                std::to_string(uplink.uplink_bps));
  }
  if (uplink.report.horizon_ps < 0) {
    throw std::invalid_argument("uplink report horizon_ps must be 0 or more, got " +
                                std::to_string(uplink.report.horizon_ps));
  }
  if (!(uplink.report.threshold >= 0) || std::isinf(uplink.report.threshold)) {
    throw std::invalid_argument("uplink report threshold must be a finite 0 or more, got " +
                                std::to_string(uplink.report.threshold));
  }
  if (config.limits.sender_hold_timeout_ns <= 0) {
    throw std::invalid_argument("sender_hold_timeout_ns must be above 0, got " +
                                std::to_string(config.limits.sender_hold_timeout_ns));
  }
  // A day: far beyond any schedule (a plan's start is then well inside the
  // picosecond clock the core keeps).
  constexpr std::int64_t kMaxPlanLeadNs = 86'400 * kNsPerSecond;
  if (config.limits.max_plan_lead_ns < 0 || config.limits.max_plan_lead_ns > kMaxPlanLeadNs) {
    throw std::invalid_argument("max_plan_lead_ns must be 0 to 86400e9 (a day), got " +
                                std::to_string(config.limits.max_plan_lead_ns));
  }
  for (const auto* weights : {&config.enforcement.peer_weights, &config.enforcement.job_weights}) {
    for (const auto& [name, weight] : *weights) {
      if (!std::isfinite(weight) || weight <= 0) {
        throw std::invalid_argument("the weight of " + name + " must be above 0, got " +
                                    std::to_string(weight));
      }
    }
  }
  if (config.enforcement.decrease_grace_ns < 0) {
    throw std::invalid_argument("enforcement decrease_grace_ns must be 0 or more, got " +
                                std::to_string(config.enforcement.decrease_grace_ns));
  }
  // A contended path's flows may run above their grants until a window shows
  // the capacity back; the receiver's overrun check must not demote them first.
  const ContentionFallback& contention = config.contention_fallback;
  const std::int64_t demotion_ns = config.enforcement.window_ns * config.enforcement.windows;
  if (contention.enabled && (contention.window_ns <= 0 || contention.window_ns >= demotion_ns ||
                             !(contention.shortfall_ratio > 0 && contention.shortfall_ratio < 1) ||
                             !(contention.recovered_ratio > 0 && contention.recovered_ratio <= 1) ||
                             contention.windows < 1 || contention.memory_ns <= 0)) {
    throw std::invalid_argument(
        "contention_fallback: window_ns must be above 0 and below enforcement window_ns x windows "
        "(" +
        std::to_string(demotion_ns) +
        " ns), shortfall_ratio in (0, 1), recovered_ratio in "
        "(0, 1], windows and memory_ns above 0; got " +
        std::to_string(contention.window_ns) + " ns, " +
        std::to_string(contention.shortfall_ratio) + ", " +
        std::to_string(contention.recovered_ratio) + ", " + std::to_string(contention.windows) +
        " and " + std::to_string(contention.memory_ns) + " ns");
  }
  const SecurityConfig& security = config.security;
  if (!security.job_key && !security.insecure_loopback_only) {
    throw std::invalid_argument(std::string("no job key: set ") + kJobKeyVariable + " or " +
                                kJobKeyFileVariable +
                                " (or insecure_loopback_only, for tests on loopback)");
  }
  if (!security.roster.empty() && !security.member) {
    throw std::invalid_argument(
        "a roster without this endpoint's own member key: peers holding the roster would refuse "
        "it");
  }
  if (security.member && !wire::valid_member_name(security.member->name)) {
    throw std::invalid_argument("member name '" + security.member->name +
                                "': expected 1-64 of [A-Za-z0-9._-]");
  }
  if (security.insecure_loopback_only && !is_loopback(config.listen.host)) {
    throw std::invalid_argument("insecure_loopback_only cannot listen on " + config.listen.text() +
                                ": loopback only");
  }
  return config;
}

// Without a job key (insecure_loopback_only) the handshake runs with a
// public key of zeros: the same code path, no secrecy.
ChannelKeys channel_keys(const SecurityConfig& security) {
  return {security.job_key.value_or(JobKey{}), security.member, security.roster};
}

// What this endpoint tells every peer about itself.
wire::Hello local_hello(const EndpointConfig& config, const PeerAddress& address) {
  wire::Hello hello;
  hello.capabilities = wire::kCapLeases;
  if (config.pacing != PacingMode::kUserspace) hello.capabilities |= wire::kCapKernelPacing;
  if (config.data_reuse.enabled) hello.capabilities |= wire::kCapDataReuse | wire::kCapDataFollow;
  hello.capabilities |= wire::kCapUplinkReports | wire::kCapPlans | wire::kCapPlanWarnings;
  if (config.security.member) hello.member = config.security.member->name;
  hello.downlink_bps = static_cast<std::uint64_t>(config.downlink_bps);
  hello.listen_port = address.port;
  return hello;
}

}  // namespace

EndpointCore::EndpointCore(EndpointConfig config)
    : config_(checked(std::move(config))),
      acceptor_(loop_, config_, *this),
      peers_(loop_, config_, local_hello(config_, acceptor_.address()),
             channel_keys(config_.security), *this),
      send_(loop_, config_, peers_, completions_),
      receive_(loop_, config_, peers_, acceptor_, completions_) {
  if (config_.metrics_listen) {
    metrics_ =
        std::make_unique<MetricsServer>(loop_, *config_.metrics_listen, [this] { return stats(); });
  }
}

// Each part closes its own sockets; peers' control channels close theirs.
EndpointCore::~EndpointCore() = default;

// ---- routing ----

void EndpointCore::on_control_connection(UnboundConnection& connection, const wire::Hello& hello) {
  peers_.adopt(connection.fd, hello, connection.bytes);
}

void EndpointCore::on_data_connection(UnboundConnection& connection) {
  receive_.bind_data(connection);
}

void EndpointCore::on_peer_identified(Peer& peer) {
  receive_.bind_parked(peer);
  send_.on_peer_authenticated(peer);
}

void EndpointCore::on_flow_message(Peer& peer, const wire::Message& message) {
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, wire::Announce>) {
          receive_.on_announce(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Update>) {
          receive_.on_update(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Report>) {
          receive_.on_report(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Plan>) {
          receive_.on_plan(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Grant>) {
          send_.on_grant(peer, m);
        } else if constexpr (std::is_same_v<T, wire::PlanWarning>) {
          send_.on_plan_warning(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Done>) {
          send_.on_done(peer, m);
        } else if constexpr (std::is_same_v<T, wire::Error>) {
          if (m.from_receiver != 0) {
            send_.on_refused(peer, m);
          } else {
            receive_.on_aborted(peer, m);
          }
        }
        // Hello and DataOpen are the peer table's own.
      },
      message);
}

void EndpointCore::on_peer_closing(Peer& peer, const std::string& reason) {
  send_.fail_flows_to(peer.id, "peer " + peer.name + ": " + reason);
  receive_.drop_flows_from(peer.id, reason);
  if (peer.authenticated) acceptor_.close_data_connections(peer.connection_id);
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
  const bool active = receive_.active() || !acceptor_.idle() || send_.has_pending();
  return now_ns + (active ? kTickNs : kIdleWaitNs);
}

void EndpointCore::on_tick(std::int64_t now_ns) {
  send_.tick(now_ns);
  receive_.tick(now_ns);
  acceptor_.expire(now_ns);
  peers_.expire(now_ns);
  if (metrics_) metrics_->expire(now_ns);
}

EndpointStats EndpointCore::stats() const {
  EndpointStats stats;
  acceptor_.add_stats(stats);
  peers_.add_stats(stats);
  send_.add_stats(stats);
  receive_.add_stats(stats);
  return stats;
}

}  // namespace safs::runtime
