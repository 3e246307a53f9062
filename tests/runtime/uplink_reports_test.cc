// A sender's own uplink shared among the receivers that grant it, on real
// sockets (loopback; EndpointConfig::uplink). Sender S has a 40 Mbit/s
// uplink. Receiver R1 grants S's urgent flow its whole downlink; receiver R2
// splits its downlink between S's background flow and sender T's. S serves
// the urgent flow first, so its background flow can get only what is left
// of the uplink (about 1 Mbit/s), far below R2's half. Reported, R2 caps it
// there and gives T the rest; unreported, T keeps its half and the rest of
// R2's downlink idles.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "runtime/clock.h"
#include "runtime/endpoint.h"
#include "runtime/test_support.h"

namespace safs::runtime::testing {
namespace {

constexpr double kLinkBps = 40 * kMbps;               // every uplink and downlink: 5 MB/s
constexpr std::size_t kUrgentBytes = 4 << 20;         // about 0.84 s at S's whole uplink
constexpr std::size_t kBackgroundBytes = 3 << 20;     // each background flow
constexpr std::int64_t kUrgentSlackNs = 2 * kSecond;  // work conservation still gives it all
constexpr std::int64_t kMeasureNs = 500 * kMs;  // S's bytes are checked against its uplink here

struct SharedUplink {
  std::int64_t other_background_ns = 0;  // when T's flow into R2 finished
  std::uint64_t sender_bytes_at_measure = 0;
  std::int64_t measured_at_ns = 0;  // the first look at or after kMeasureNs
  EndpointStats sender;
  EndpointStats shared_receiver;  // R2
};

// `reports`: false keeps S's uplink sharing but never reports (a horizon no
// limit lasts), the control.
SharedUplink shared_uplink(bool reports) {
  EndpointConfig sender_config = testing::config_at("127.0.0.1", kLinkBps, nullptr);
  sender_config.uplink.uplink_bps = kLinkBps;
  if (!reports) sender_config.uplink.report.horizon_ps = 3600 * kPsPerSec;
  const EndpointConfig receiver_config = testing::config_at("127.0.0.1", kLinkBps, nullptr);
  Endpoint r1(receiver_config), r2(receiver_config);
  LoopThread loop1(r1), loop2(r2);
  Endpoint s(sender_config);
  Endpoint t(testing::config_at("127.0.0.1", kLinkBps, nullptr));
  // send() does not copy: the payloads outlive their flows.
  const auto urgent_payload = random_bytes(kUrgentBytes, 1);
  const auto s_background_payload = random_bytes(kBackgroundBytes, 2);
  const auto t_background_payload = random_bytes(kBackgroundBytes, 3);
  const std::int64_t start = monotonic_ns();
  const FlowHandle urgent =
      s.send(r1.address(), urgent_payload, FlowHint::urgent_within(kUrgentSlackNs, 1));
  const FlowHandle s_background =
      s.send(r2.address(), s_background_payload, FlowHint::background(2));
  const FlowHandle t_background =
      t.send(r2.address(), t_background_payload, FlowHint::background(3));
  SharedUplink run;
  bool all_done = false;
  while (!all_done && monotonic_ns() - start < 20 * kSecond) {
    s.progress(kMs / 2);
    t.progress(kMs / 2);
    const std::int64_t now = monotonic_ns() - start;
    if (run.measured_at_ns == 0 && now >= kMeasureNs) {
      run.sender_bytes_at_measure = s.stats().data_bytes_sent;
      run.measured_at_ns = now;
    }
    const FlowStatus u = s.test(urgent), b = s.test(s_background), c = t.test(t_background);
    if (u.state == FlowState::kFailed || b.state == FlowState::kFailed ||
        c.state == FlowState::kFailed) {
      ADD_FAILURE() << "failed: '" << u.error << "', '" << b.error << "', '" << c.error << "'";
      break;
    }
    if (c.state == FlowState::kDone && run.other_background_ns == 0) run.other_background_ns = now;
    all_done =
        u.state == FlowState::kDone && b.state == FlowState::kDone && c.state == FlowState::kDone;
  }
  EXPECT_TRUE(all_done) << "not every flow finished";
  run.sender = s.stats();
  run.shared_receiver = loop2.stats();
  return run;
}

// What S may have sent by `elapsed_ns`: its uplink's worth, its two flows'
// blind bytes, and a tenth for pacing's granularity. Two grants of R1's and
// R2's whole and half downlinks, unshared, would send half as much again
// (measured: 3.39 MB by 0.5 s against 2.56 MB shared).
std::uint64_t uplink_bound_bytes(std::int64_t elapsed_ns) {
  const double seconds = static_cast<double>(elapsed_ns) / kSecond;
  return static_cast<std::uint64_t>(1.1 * kLinkBps / 8 * seconds) + 2 * (64 << 10);
}

TEST(UplinkReports, SenderKeepsToItsUplinkAndTheReceiverGivesTheRestToAnother) {
  const SharedUplink with = shared_uplink(true);
  const SharedUplink without = shared_uplink(false);
  // Unreported, T's flow keeps half of R2's downlink: about 1.3 s. Reported,
  // it gets nearly all of it while S's urgent flow lasts: about 0.7 s.
  ASSERT_GT(with.other_background_ns, 0);
  EXPECT_LT(static_cast<double>(with.other_background_ns),
            0.8 * static_cast<double>(without.other_background_ns))
      << with.other_background_ns / kMs << " ms against " << without.other_background_ns / kMs;
  // A limit lasting the urgent flow's life is reported once, and lifted once
  // it ends: a few reports, not one per reallocation.
  EXPECT_GE(with.sender.uplink_reports_sent, 1u);
  EXPECT_LE(with.sender.uplink_reports_sent, 10u);  // measured 3-4; reallocations: about 180
  // Each one reached the receiver while its flow was there (the last may
  // come after the flow ended, and is then not counted).
  EXPECT_GE(with.shared_receiver.uplink_reports_received, 1u);
  EXPECT_LE(with.shared_receiver.uplink_reports_received, with.sender.uplink_reports_sent);
  EXPECT_EQ(without.sender.uplink_reports_sent, 0u);
  // Either way the sender holds its flows to its uplink.
  for (const SharedUplink& run : {with, without}) {
    ASSERT_GT(run.measured_at_ns, 0);
    EXPECT_LE(run.sender_bytes_at_measure, uplink_bound_bytes(run.measured_at_ns));
  }
}

// Bad uplink settings stop the endpoint at its start, naming the setting.
TEST(UplinkReports, BadSettingsAreRefusedByName) {
  struct Case {
    const char* name;
    void (*set)(EndpointConfig&);
  };
  const Case cases[] = {
      {"uplink_bps", [](EndpointConfig& c) { c.uplink.uplink_bps = -1; }},
      {"uplink_bps", [](EndpointConfig& c) { c.uplink.uplink_bps = std::nan(""); }},
      {"uplink_bps", [](EndpointConfig& c) { c.uplink.uplink_bps = 1e16; }},
      {"horizon_ps", [](EndpointConfig& c) { c.uplink.report.horizon_ps = -1; }},
      {"threshold", [](EndpointConfig& c) { c.uplink.report.threshold = -0.5; }},
      {"sender_hold_timeout_ns", [](EndpointConfig& c) { c.limits.sender_hold_timeout_ns = 0; }},
  };
  for (const Case& bad : cases) {
    EndpointConfig config = config_at("127.0.0.1", kLinkBps, nullptr);
    bad.set(config);
    try {
      Endpoint endpoint{config};
      ADD_FAILURE() << "a bad " << bad.name << " was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find(bad.name), std::string::npos) << e.what();
    }
  }
  EndpointConfig fine = config_at("127.0.0.1", kLinkBps, nullptr);
  fine.uplink.uplink_bps = kLinkBps;
  EXPECT_NO_THROW(Endpoint{fine});
}

}  // namespace
}  // namespace safs::runtime::testing
