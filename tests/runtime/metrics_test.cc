// The Prometheus counters, scraped over HTTP from the receiver's own loop
// after a real transfer and an outsider's failed handshake.
#include "runtime/metrics.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>

#include "runtime/endpoint.h"
#include "runtime/scripted_peer.h"
#include "runtime/test_support.h"

namespace safs::runtime {
namespace {

using namespace safs::runtime::testing;  // NOLINT: the runtime tests' helpers

std::string scrape(std::uint16_t port) {
  RawPeer client(port);
  const std::string request = "GET /metrics HTTP/1.0\r\n\r\n";
  client.write(std::vector<std::uint8_t>(request.begin(), request.end()));
  std::string response;
  char buffer[4096];
  for (std::int64_t t = monotonic_ns(); monotonic_ns() - t < 2 * kSecond;) {
    const ssize_t n = recv(client.fd(), buffer, sizeof buffer, 0);
    if (n <= 0) break;
    response.append(buffer, static_cast<std::size_t>(n));
  }
  return response;
}

// Sample lines ("name value" or "name{labels} value") by name with labels.
std::map<std::string, double> samples(const std::string& text) {
  std::map<std::string, double> found;
  std::istringstream lines(text.substr(text.find("\r\n\r\n") + 4));
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.rfind(' ');
    found[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return found;
}

TEST(Metrics, ScrapedCountersMatchWhatHappened) {
  EndpointConfig config = config_at("127.0.0.1", 400 * kMbps, nullptr);
  config.metrics_listen = PeerAddress{"127.0.0.1", 0};
  Endpoint receiver(config);
  ASSERT_TRUE(receiver.metrics_address());
  LoopThread loop(receiver);
  Endpoint sender(config_at("127.0.0.1", 400 * kMbps, nullptr));
  const auto payload = random_bytes(2 << 20, 21);
  const FlowHandle flow =
      sender.send(receiver.address(), payload, FlowHint::urgent_within(kSecond, 1));
  ASSERT_EQ(sender.wait(flow, 5 * kSecond).state, FlowState::kDone);
  JobKey wrong{};
  wrong[0] = 1;
  ScriptedPeer outsider(receiver.address().port, wrong);
  EXPECT_FALSE(outsider.handshake());
  EXPECT_TRUE(outsider.raw().closed_within(kSecond));

  const std::string response = scrape(receiver.metrics_address()->port);
  ASSERT_EQ(response.rfind("HTTP/1.0 200 OK\r\n", 0), 0u) << response;
  EXPECT_NE(response.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(response.find("# TYPE safs_flows_completed_total counter"), std::string::npos);
  const auto values = samples(response);
  EXPECT_EQ(values.at("safs_flows_completed_total"), 1);
  EXPECT_EQ(values.at("safs_data_bytes_received_total"), static_cast<double>(payload.size()));
  EXPECT_GE(values.at("safs_grants_sent_total"), 1);
  EXPECT_EQ(values.at("safs_authentication_failures_total"), 1);
  EXPECT_EQ(values.at("safs_deadline_misses_total"), 0);
  EXPECT_EQ(values.at("safs_lateness_seconds_count"), 1);
  EXPECT_EQ(values.at("safs_lateness_seconds_bucket{le=\"0.000000\"}"), 1);  // met it
  EXPECT_EQ(values.at("safs_peers"), 1);
}

TEST(Metrics, LatenessHistogramIsCumulative) {
  EndpointStats stats;
  stats.lateness_buckets = {1, 2, 0, 3, 0, 0, 4};
  stats.deadline_misses = 7;
  const std::string text = prometheus_text(stats);
  const auto values = samples("\r\n\r\n" + text);
  EXPECT_EQ(values.at("safs_lateness_seconds_bucket{le=\"-0.100000\"}"), 1);
  EXPECT_EQ(values.at("safs_lateness_seconds_bucket{le=\"0.000000\"}"), 3);
  EXPECT_EQ(values.at("safs_lateness_seconds_bucket{le=\"0.010000\"}"), 6);
  EXPECT_EQ(values.at("safs_lateness_seconds_bucket{le=\"+Inf\"}"), 10);
  EXPECT_EQ(values.at("safs_lateness_seconds_count"), 10);
  EXPECT_EQ(values.at("safs_deadline_misses_total"), 7);
}

TEST(Metrics, GrantDeliveryHistogramAndQueue) {
  EndpointStats stats;
  stats.grant_delivery.windows = {2, 0, 0, 0, 0, 1, 0, 0, 0, 5, 3};
  stats.grant_delivery.lossy_windows = 1;
  stats.grant_delivery.queued_windows = 4;
  stats.grant_delivery.max_queue_delay_ns = 21'000'000;
  const auto values = samples("\r\n\r\n" + prometheus_text(stats));
  EXPECT_EQ(values.at("safs_grant_delivery_ratio_bucket{le=\"0.100000\"}"), 2);
  EXPECT_EQ(values.at("safs_grant_delivery_ratio_bucket{le=\"0.600000\"}"), 3);
  EXPECT_EQ(values.at("safs_grant_delivery_ratio_bucket{le=\"1.000000\"}"), 8);
  EXPECT_EQ(values.at("safs_grant_delivery_ratio_bucket{le=\"+Inf\"}"), 11);
  EXPECT_EQ(values.at("safs_grant_delivery_ratio_count"), 11);
  EXPECT_EQ(values.at("safs_lossy_windows_total"), 1);
  EXPECT_EQ(values.at("safs_queued_windows_total"), 4);
  EXPECT_DOUBLE_EQ(values.at("safs_max_queue_delay_seconds"), 0.021);
}

}  // namespace
}  // namespace safs::runtime
