#include "runtime/metrics.h"

#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "runtime/clock.h"

namespace safs::runtime {
namespace {

constexpr std::size_t kMaxRequestBytes = 4096;
constexpr std::size_t kMaxScrapes = 8;  // at once; more are closed unanswered
constexpr std::int64_t kScrapeTimeoutNs = kNsPerSecond;

struct Counter {
  const char* name;
  const char* help;
  std::uint64_t EndpointStats::*field;
};

// Every counter once: its name, its help text and where it lives.
constexpr std::array kCounters = {
    Counter{"safs_flows_completed_total", "Incoming flows delivered whole.",
            &EndpointStats::incoming_completed},
    Counter{"safs_flows_failed_total", "Incoming flows dropped before their end.",
            &EndpointStats::incoming_failed},
    Counter{"safs_flows_refused_total", "Announced flows refused (limits, budget, replays).",
            &EndpointStats::refused_flows},
    Counter{"safs_data_bytes_received_total", "Payload bytes received.",
            &EndpointStats::data_bytes_received},
    Counter{"safs_data_bytes_sent_total", "Payload bytes sent.", &EndpointStats::data_bytes_sent},
    Counter{"safs_control_bytes_received_total", "Control bytes received.",
            &EndpointStats::control_bytes_received},
    Counter{"safs_control_bytes_sent_total", "Control bytes sent.",
            &EndpointStats::control_bytes_sent},
    Counter{"safs_grants_sent_total", "Grants sent to senders.", &EndpointStats::grants_sent},
    Counter{"safs_demotions_total", "Peers demoted for ignoring grants or missed claims.",
            &EndpointStats::demoted_peers},
    Counter{"safs_ghost_flows_total", "Granted flows that sent nothing, taken off the scheduler.",
            &EndpointStats::ghost_flows},
    Counter{"safs_quota_demotions_total", "Urgent flows over their peer's urgent share.",
            &EndpointStats::quota_demotions},
    Counter{"safs_deadline_misses_total", "Incoming flows completed after their deadline.",
            &EndpointStats::deadline_misses},
    Counter{"safs_consumer_waits_total",
            "Incoming urgent flows made due now because their consumer waited for them.",
            &EndpointStats::consumer_waits},
    Counter{"safs_uplink_reports_sent_total",
            "Reports to receivers that this sender's uplink limits their flow.",
            &EndpointStats::uplink_reports_sent},
    Counter{"safs_uplink_reports_received_total",
            "Reports from senders that their own uplink limits a flow.",
            &EndpointStats::uplink_reports_received},
    Counter{"safs_plans_sent_total", "Transfers announced ahead to their receivers.",
            &EndpointStats::plans_sent},
    Counter{"safs_flows_on_plans_total", "Outgoing flows started under their planned grant.",
            &EndpointStats::flows_on_plans},
    Counter{"safs_plans_received_total", "Transfers announced ahead by senders, planned in.",
            &EndpointStats::plans_received},
    Counter{"safs_plans_infeasible_total",
            "Plans warned of: they joined an urgent set that cannot all be on time, or cannot "
            "be on time from their own start.",
            &EndpointStats::plans_infeasible},
    Counter{"safs_plans_dropped_total",
            "Plans made before the peer's Hello, which did not read plans.",
            &EndpointStats::plans_dropped},
    Counter{"safs_plans_unused_total",
            "Plans that did not serve what they reserved: no flow, a background one, or "
            "under half the size.",
            &EndpointStats::plans_unused},
    Counter{"safs_plans_warned_late_total",
            "Planned flows warned of (plans_infeasible) that ended after their planned deadline.",
            &EndpointStats::plans_warned_late},
    Counter{"safs_plans_warned_on_time_total",
            "Planned flows warned of that ended by their planned deadline (a false alarm).",
            &EndpointStats::plans_warned_on_time},
    Counter{"safs_plans_unwarned_late_total",
            "Planned flows not warned of that ended after their planned deadline (a miss).",
            &EndpointStats::plans_unwarned_late},
    Counter{"safs_plans_unwarned_on_time_total",
            "Planned flows not warned of that ended by their planned deadline.",
            &EndpointStats::plans_unwarned_on_time},
    Counter{"safs_plans_refused_total", "Plans ignored: over a peer's limits, or demoted.",
            &EndpointStats::plans_refused},
    Counter{"safs_plan_warnings_sent_total",
            "Plans warned of, told to their senders (those that read plan warnings).",
            &EndpointStats::plan_warnings_sent},
    Counter{"safs_plan_warnings_received_total",
            "Warnings from receivers that a plan of this endpoint cannot be on time.",
            &EndpointStats::plan_warnings_received},
    Counter{"safs_authentication_failures_total",
            "Wrong proofs, forged or replayed frames, bad flow tokens.",
            &EndpointStats::authentication_failures},
    Counter{"safs_protocol_errors_total", "Connections closed for a bad message.",
            &EndpointStats::protocol_errors},
    Counter{"safs_refused_connections_total", "Connections closed at a cap or shed.",
            &EndpointStats::refused_connections},
    Counter{"safs_data_connections_opened_total", "Data connections opened for outgoing flows.",
            &EndpointStats::data_connections_opened},
    Counter{
        "safs_data_connections_reused_total",
        "Outgoing flows sent on an idle data connection, or one passed on, instead of a new one.",
        &EndpointStats::data_connections_reused},
    Counter{"safs_flows_followed_total",
            "Outgoing flows that followed an earlier one on its connection on a contended path.",
            &EndpointStats::flows_followed},
    Counter{"safs_idle_restart_warnings_total",
            "A contended path met net.ipv4.tcp_slow_start_after_idle = 1 (at most once).",
            &EndpointStats::idle_restart_warnings},
    Counter{"safs_risk_reports_total",
            "Outgoing urgent flows projected to miss their deadlines (on_risk), once per episode.",
            &EndpointStats::risk_reports},
    Counter{"safs_shortfall_episodes_total",
            "Times urgent flows went EDF at line rate because flows got less than granted.",
            &EndpointStats::shortfall_episodes},
    Counter{"safs_contended_paths_total",
            "Times a path to a receiver was found contended and its flows went unpaced.",
            &EndpointStats::contended_paths},
};

void append_counter(std::string& text, const char* name, const char* help, std::uint64_t value) {
  text += std::string("# HELP ") + name + ' ' + help + '\n';
  text += std::string("# TYPE ") + name + " counter\n";
  text += std::string(name) + ' ' + std::to_string(value) + '\n';
}

// Cumulative, as Prometheus histograms are: buckets[i] counts what is at
// most bounds[i] and above the bound before; the last bucket the rest.
template <std::size_t N>
void append_histogram(std::string& text, const char* name, const char* help,
                      const std::array<double, N>& bounds,
                      const std::array<std::uint64_t, N + 1>& buckets) {
  text += std::string("# HELP ") + name + ' ' + help + '\n';
  text += std::string("# TYPE ") + name + " histogram\n";
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < N; ++i) {
    cumulative += buckets[i];
    text += std::string(name) + "_bucket{le=\"" + std::to_string(bounds[i]) + "\"} " +
            std::to_string(cumulative) + '\n';
  }
  cumulative += buckets[N];
  text += std::string(name) + "_bucket{le=\"+Inf\"} " + std::to_string(cumulative) + '\n';
  text += std::string(name) + "_count " + std::to_string(cumulative) + '\n';
}

}  // namespace

std::string prometheus_text(const EndpointStats& stats) {
  std::string text;
  for (const Counter& counter : kCounters) {
    append_counter(text, counter.name, counter.help, stats.*counter.field);
  }
  text += "# HELP safs_peers Peers with a control connection now.\n# TYPE safs_peers gauge\n";
  text += "safs_peers " + std::to_string(stats.peers) + '\n';
  // Completion minus deadline.
  std::array<double, kLatenessBoundsNs.size()> lateness_bounds_s{};
  for (std::size_t i = 0; i < kLatenessBoundsNs.size(); ++i) {
    lateness_bounds_s[i] = static_cast<double>(kLatenessBoundsNs[i]) / 1e9;
  }
  append_histogram(text, "safs_lateness_seconds",
                   "Completion minus deadline of incoming flows with a deadline.",
                   lateness_bounds_s, stats.lateness_buckets);
  const GrantDelivery& delivery = stats.grant_delivery;
  std::array<double, GrantDelivery::kBuckets - 1> tenths{};
  for (std::size_t i = 0; i < tenths.size(); ++i) tenths[i] = static_cast<double>(i + 1) / 10;
  append_histogram(text, "safs_grant_delivery_ratio",
                   "Per window and path to a receiver: what granted flows delivered over what "
                   "their grants allowed.",
                   tenths, delivery.windows);
  append_counter(text, "safs_lossy_windows_total",
                 "Windows of grant_delivery_ratio with a retransmission.", delivery.lossy_windows);
  append_counter(text, "safs_queued_windows_total",
                 "Windows of grant_delivery_ratio whose flows found a queue at a bottleneck.",
                 delivery.queued_windows);
  text +=
      "# HELP safs_max_queue_delay_seconds Largest smoothed RTT above the lowest in a window "
      "of grant_delivery_ratio.\n# TYPE safs_max_queue_delay_seconds gauge\n";
  text += "safs_max_queue_delay_seconds " +
          std::to_string(static_cast<double>(delivery.max_queue_delay_ns) / 1e9) + '\n';
  return text;
}

MetricsServer::MetricsServer(EventLoop& loop, const PeerAddress& address,
                             std::function<EndpointStats()> stats)
    : loop_(loop), stats_(std::move(stats)) {
  listen_fd_ = listen_tcp(address, static_cast<int>(kMaxScrapes));
  if (listen_fd_ < 0) throw ListenError(address, "serve metrics");
  address_ = {address.host, local_port(listen_fd_)};
  loop_.add(listen_fd_, EPOLLIN, [this](std::uint32_t) { on_accept(); });
}

MetricsServer::~MetricsServer() {
  for (const auto& [fd, scrape] : scrapes_) close(fd);
  close(listen_fd_);
}

void MetricsServer::on_accept() {
  for (;;) {
    const int fd = accept_tcp(listen_fd_);
    if (fd < 0) return;
    if (scrapes_.size() >= kMaxScrapes) {
      close(fd);
      continue;
    }
    scrapes_[fd] = {{}, monotonic_ns()};
    loop_.add(fd, EPOLLIN, [this, fd](std::uint32_t) { on_readable(fd); });
  }
}

void MetricsServer::on_readable(int fd) {
  Scrape& scrape = scrapes_.at(fd);
  std::array<char, 1024> chunk{};
  const ssize_t n = recv(fd, chunk.data(), chunk.size(), 0);
  if (n <= 0) {
    if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) close_scrape(fd);
    return;
  }
  scrape.request.append(chunk.data(), static_cast<std::size_t>(n));
  if (scrape.request.find("\r\n\r\n") == std::string::npos) {
    if (scrape.request.size() > kMaxRequestBytes) close_scrape(fd);
    return;
  }
  const std::string body = prometheus_text(stats_());
  const std::string response =
      "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n" + body;
  // A few kilobytes: the socket buffer takes them at once.
  [[maybe_unused]] const ssize_t sent = send(fd, response.data(), response.size(), MSG_NOSIGNAL);
  close_scrape(fd);
}

void MetricsServer::close_scrape(int fd) {
  loop_.remove(fd);
  close(fd);
  scrapes_.erase(fd);
}

void MetricsServer::expire(std::int64_t now_ns) {
  std::vector<int> late;
  for (const auto& [fd, scrape] : scrapes_) {
    if (now_ns - scrape.since_ns > kScrapeTimeoutNs) late.push_back(fd);
  }
  for (int fd : late) close_scrape(fd);
}

}  // namespace safs::runtime
