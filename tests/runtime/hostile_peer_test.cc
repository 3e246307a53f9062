// Hostile and faulty peers: bad control input closes only that connection
// with a logged reason; a peer that dies mid-flow fails the sender's flow and
// frees the receiver's state; per-peer limits refuse only the excess; a
// sender that ignores its grants is demoted and held to them.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "runtime/endpoint.h"
#include "runtime/scripted_peer.h"
#include "runtime/test_support.h"
#include "runtime/wire.h"

namespace safs::runtime {
namespace {

using testing::CapturedLog;
using testing::checksum;
using testing::frame;
using testing::hello_from;
using testing::kMbps;
using testing::kMs;
using testing::kSecond;
using testing::LoopThread;
using testing::random_bytes;
using testing::RawPeer;
using testing::ScriptedPeer;

TEST(HostilePeer, BadControlInputClosesOnlyThatConnection) {
  CapturedLog log;
  Endpoint receiver(testing::config_at("127.0.0.1", 400 * kMbps, &log));
  std::atomic<std::uint64_t> received_checksum = 0;
  receiver.on_message([&](const IncomingMessage& m) { received_checksum = checksum(m.data); });
  LoopThread loop(receiver);
  // A well-behaved peer transfers meanwhile, over its own connection.
  Endpoint good(testing::config_at("127.0.0.1", 400 * kMbps, nullptr));
  const auto payload = random_bytes(6 << 20, 11);
  const FlowHandle flow = good.send(receiver.address(), payload, FlowHint::background());
  std::thread driver([&] { good.wait(flow, 10 * kSecond); });

  struct Case {
    std::string name;
    std::vector<std::uint8_t> bytes;
    bool end_writes;
    std::string logged;
  };
  std::vector<Case> cases;
  cases.push_back({"garbage",
                   {'G', 'E', 'T', ' ', '/', ' ', 'H', 'T', 'T', 'P'},
                   false,
                   "unsupported frame version"});
  auto unknown = frame(hello_from(1));
  const auto tail = frame(wire::Done{1, 1});
  std::vector<std::uint8_t> unknown_frame = tail;
  unknown_frame[3] = 42;
  unknown.insert(unknown.end(), unknown_frame.begin(), unknown_frame.end());
  cases.push_back({"unknown type", unknown, false, "unknown message type 42"});
  auto oversized = frame(hello_from(2));
  const std::vector<std::uint8_t> huge_header = {0, wire::kVersion, 0, 2, 0, 0x10, 0, 0};
  oversized.insert(oversized.end(), huge_header.begin(), huge_header.end());
  cases.push_back({"oversized", oversized, false, "oversized frame"});
  auto truncated = frame(hello_from(3));
  const auto announce = frame(wire::Announce{5, 100, 0, 0, 0, 0, 0});
  auto unsealed = frame(hello_from(6));
  unsealed.insert(unsealed.end(), announce.begin(), announce.end());
  cases.push_back(
      {"announce before authentication", unsealed, false, "message before authentication"});
  truncated.insert(truncated.end(), announce.begin(), announce.begin() + 20);
  cases.push_back({"truncated", truncated, true, "truncated frame"});
  auto malformed = frame(hello_from(4));
  auto bad_announce = announce;
  bad_announce[wire::kHeaderBytes + 24] = 7;  // class byte out of range
  malformed.insert(malformed.end(), bad_announce.begin(), bad_announce.end());
  cases.push_back({"malformed", malformed, false, "invalid class"});
  cases.push_back({"before hello", announce, false, "first frame is neither"});
  wire::Hello no_magic = hello_from(5);
  no_magic.magic = 0;
  cases.push_back({"no magic", frame(no_magic), false, "magic"});

  for (const Case& c : cases) {
    RawPeer peer(receiver.address().port);
    ASSERT_TRUE(peer.connected());
    peer.write(c.bytes);
    if (c.end_writes) peer.end_writes();
    EXPECT_TRUE(peer.closed_within(2 * kSecond)) << c.name;
    EXPECT_TRUE(log.contains(c.logged)) << c.name << ": " << log.all();
  }
  driver.join();
  ASSERT_EQ(good.test(flow).state, FlowState::kDone);
  const EndpointStats stats = loop.stats();
  loop.stop();
  EXPECT_EQ(stats.protocol_errors, cases.size());
  EXPECT_EQ(received_checksum.load(), checksum(payload));
  EXPECT_EQ(stats.peers, 1u);  // only the good peer is left
}

TEST(HostilePeer, ReceiverDeathFailsTheSendersFlow) {
  auto receiver = std::make_unique<Endpoint>(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
  auto loop = std::make_unique<LoopThread>(*receiver);
  CapturedLog log;
  Endpoint sender(testing::config_at("127.0.0.1", 80 * kMbps, &log));
  const auto payload = random_bytes(20 << 20, 1);  // 2 s at 10 MB/s
  const FlowHandle flow = sender.send(receiver->address(), payload, FlowHint::background());
  EXPECT_EQ(sender.wait(flow, 200 * kMs).state, FlowState::kPending);
  loop.reset();
  receiver.reset();  // the receiving process is gone: its sockets close
  const std::int64_t died = monotonic_ns();
  const FlowStatus status = sender.wait(flow, 2 * kSecond);
  EXPECT_EQ(status.state, FlowState::kFailed);
  EXPECT_FALSE(status.error.empty());
  EXPECT_LT(monotonic_ns() - died, 500 * kMs);
}

TEST(HostilePeer, SenderDeathFreesTheReceiversState) {
  int to_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  // Fork before any thread exists, so the child's heap is consistent.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::uint16_t port = 0;
    if (read(to_child[0], &port, sizeof port) != sizeof port) _exit(1);
    Endpoint sender(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
    const auto payload = random_bytes(40 << 20, 1);
    const FlowHandle flow =
        sender.send(PeerAddress{"127.0.0.1", port}, payload, FlowHint::background());
    sender.wait(flow, 30 * kSecond);
    _exit(0);
  }
  Endpoint receiver(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
  const std::uint16_t port = receiver.address().port;
  ASSERT_EQ(write(to_child[1], &port, sizeof port), static_cast<ssize_t>(sizeof port));
  const std::int64_t start = monotonic_ns();
  while (receiver.stats().data_bytes_received < (1u << 20) &&
         monotonic_ns() - start < 5 * kSecond) {
    receiver.progress(kMs);
  }
  ASSERT_EQ(receiver.stats().incoming_flows, 1u);
  EXPECT_GT(receiver.stats().incoming_buffer_bytes, 0u);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  const std::int64_t died = monotonic_ns();
  while (receiver.stats().incoming_flows != 0 && monotonic_ns() - died < 2 * kSecond) {
    receiver.progress(kMs);
  }
  const EndpointStats stats = receiver.stats();
  EXPECT_EQ(stats.incoming_flows, 0u);
  EXPECT_EQ(stats.incoming_buffer_bytes, 0u);
  EXPECT_EQ(stats.incoming_failed, 1u);
  EXPECT_EQ(stats.peers, 0u);
  close(to_child[0]);
  close(to_child[1]);
}

TEST(HostilePeer, PerPeerLimitsRefuseOnlyTheExcess) {
  CapturedLog log;
  EndpointConfig config = testing::config_at("127.0.0.1", 1000 * kMbps, &log);
  config.limits.max_flows = 2;
  config.limits.max_buffer_bytes = 3 << 20;
  config.limits.max_message_bytes = 8 << 20;
  Endpoint receiver(config);
  LoopThread loop(receiver);
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  const auto one_mb = random_bytes(1 << 20, 1);
  const auto three_mb = random_bytes(3 << 20, 2);
  const auto nine_mb = random_bytes(9 << 20, 3);
  // Held at once: two 1 MB flows fit; a third flow is one too many.
  const FlowHandle a = sender.send(receiver.address(), one_mb, FlowHint::background());
  const FlowHandle b = sender.send(receiver.address(), one_mb, FlowHint::background());
  const FlowHandle c = sender.send(receiver.address(), one_mb, FlowHint::background());
  EXPECT_EQ(sender.wait(a, 5 * kSecond).state, FlowState::kDone);
  EXPECT_EQ(sender.wait(b, 5 * kSecond).state, FlowState::kDone);
  const FlowStatus refused = sender.wait(c, 5 * kSecond);
  EXPECT_EQ(refused.state, FlowState::kFailed);
  EXPECT_NE(refused.error.find("flows from one peer"), std::string::npos) << refused.error;
  // Memory: 1 MB + 3 MB is over 3 MB held for one peer.
  const FlowHandle d = sender.send(receiver.address(), one_mb, FlowHint::background());
  const FlowHandle e = sender.send(receiver.address(), three_mb, FlowHint::background());
  EXPECT_EQ(sender.wait(d, 5 * kSecond).state, FlowState::kDone);
  const FlowStatus memory = sender.wait(e, 5 * kSecond);
  EXPECT_EQ(memory.state, FlowState::kFailed);
  EXPECT_NE(memory.error.find("bytes for one peer"), std::string::npos) << memory.error;
  // A message over the per-flow limit, and the connection still works after.
  const FlowHandle f = sender.send(receiver.address(), nine_mb, FlowHint::background());
  EXPECT_EQ(sender.wait(f, 5 * kSecond).state, FlowState::kFailed);
  const FlowHandle g = sender.send(receiver.address(), one_mb, FlowHint::background());
  EXPECT_EQ(sender.wait(g, 5 * kSecond).state, FlowState::kDone);
  const EndpointStats stats = loop.stats();
  loop.stop();
  EXPECT_EQ(stats.incoming_buffer_bytes, 0u);
  EXPECT_EQ(stats.protocol_errors, 0u);
}

// Runs `endpoint`'s loop on this thread for `duration_ns`.
void run_for(Endpoint& endpoint, std::int64_t duration_ns) {
  for (const std::int64_t t = monotonic_ns(); monotonic_ns() - t < duration_ns;) {
    endpoint.progress(kMs);
  }
}

// The scripted peer's handshake with `receiver`, whose loop this thread
// drives meanwhile; true once both proved the key and the receiver read ours.
bool handshake_with(Endpoint& receiver, ScriptedPeer& control) {
  std::atomic<bool> shaken = false;
  std::thread handshake([&] { shaken = control.handshake(); });
  for (std::int64_t t = monotonic_ns(); !shaken && monotonic_ns() - t < 2 * kSecond;) {
    receiver.progress(kMs);
  }
  handshake.join();
  receiver.progress(kMs);  // reads our proof
  return shaken;
}

TEST(HostilePeer, SenderIgnoringItsGrantsIsDemotedAndHeldToThem) {
  constexpr double kDownlinkBps = 80 * kMbps;  // 10 MB/s
  constexpr std::uint64_t kFlowBytes = 256ull << 20;
  CapturedLog log;
  Endpoint receiver(testing::config_at("127.0.0.1", kDownlinkBps, &log));
  // A posted buffer: pages are touched only as bytes land.
  std::unique_ptr<std::byte[]> landing(new std::byte[kFlowBytes]);
  receiver.post_receive(1, std::span(landing.get(), kFlowBytes));
  ScriptedPeer control(receiver.address().port);
  ASSERT_TRUE(handshake_with(receiver, control));
  control.send(wire::Announce{1, kFlowBytes, wire::kNoDeadline, 0, 0, 0, 1});
  std::atomic<bool> stop = false;
  std::atomic<std::uint64_t> sent = 0;
  std::thread rogue([&] {
    RawPeer data(receiver.address().port);
    data.write(control.data_open(1, kFlowBytes));
    std::vector<std::uint8_t> chunk(64 * 1024, 0x5a);
    while (!stop && sent < kFlowBytes) {
      pollfd p{data.fd(), POLLOUT, 0};
      if (poll(&p, 1, 10) <= 0) continue;
      const ssize_t n = ::send(data.fd(), chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<std::uint64_t>(n);
      if (n < 0 && errno != EAGAIN) break;
    }
  });
  const std::int64_t start = monotonic_ns();
  while (receiver.stats().demoted_peers == 0 && monotonic_ns() - start < 2 * kSecond) {
    receiver.progress(kMs);
  }
  const std::int64_t demoted_after = monotonic_ns() - start;
  EXPECT_EQ(receiver.stats().demoted_peers, 1u) << log.all();
  EXPECT_LT(demoted_after, 500 * kMs);
  EXPECT_TRUE(log.contains("demoted")) << log.all();
  // Held to its grant: once the socket buffers are full, what gets through is
  // what the receiver reads, at about the granted rate.
  run_for(receiver, 300 * kMs);
  const std::uint64_t before = receiver.stats().data_bytes_received;
  const std::int64_t from = monotonic_ns();
  run_for(receiver, 500 * kMs);
  const double seconds = static_cast<double>(monotonic_ns() - from) / 1e9;
  const double held_bps =
      static_cast<double>(receiver.stats().data_bytes_received - before) * 8 / seconds;
  EXPECT_LT(held_bps, 1.5 * kDownlinkBps);
  stop = true;
  rogue.join();
}

// Plan warnings name only the reader's own plans. The endpoint plans a
// transfer to receiver R, which can serve it in time; scripted peer Y, which
// holds no plan of the endpoint's, warns of that plan's number and of a
// thousand others: nothing is reported, and Y's connection is kept.
TEST(HostilePeer, PlanWarningsForPlansNotMadeToTheirSenderAreIgnored) {
  Endpoint r(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
  LoopThread r_loop(r);
  Endpoint endpoint(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
  std::size_t reports = 0;
  endpoint.on_risk([&](const FlowRisk&) { ++reports; });
  ScriptedPeer y(endpoint.address().port);
  ASSERT_TRUE(handshake_with(endpoint, y));
  FlowHint hint = FlowHint::urgent_within(10 * kSecond);
  hint.group = 5;
  std::string why_not;
  ASSERT_TRUE(
      endpoint.announce_ahead(r.address(), 1 << 20, monotonic_ns() + 500 * kMs, hint, &why_not))
      << why_not;
  // Plans are numbered from 1 per endpoint: Y names this one and 999 more.
  for (std::uint32_t number = 1; number <= 1000; ++number) y.send(wire::PlanWarning{number});
  run_for(endpoint, 300 * kMs);
  const EndpointStats stats = endpoint.stats();
  EXPECT_EQ(stats.plans_sent, 1u);
  EXPECT_EQ(stats.plan_warnings_received, 0u);
  EXPECT_EQ(stats.protocol_errors, 0u);
  EXPECT_EQ(stats.peers, 2u);
  EXPECT_EQ(reports, 0u);
  EXPECT_EQ(r_loop.stats().plans_infeasible, 0u);
}

// A receiver that repeats itself is heard once per plan. Scripted receiver R
// takes the endpoint's two plans, A and B, and warns of A three times before
// its transfer starts, then of both three times after both started: the
// application hears of A once, by A's tag and before its flow existed, and
// of B once, naming B's flow.
TEST(HostilePeer, APlanIsReportedOnceHoweverOftenItsReceiverWarns) {
  Endpoint endpoint(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
  std::vector<FlowRisk> planned;
  endpoint.on_risk([&](const FlowRisk& risk) {
    if (risk.planned) planned.push_back(risk);
  });
  testing::ScriptedListener listener;
  ASSERT_NE(listener.port(), 0);
  const PeerAddress r_address{"127.0.0.1", listener.port()};
  FlowHint a = FlowHint::urgent_within(10 * kSecond);
  a.group = 5;
  a.tag = 77;
  FlowHint b = a;
  b.group = 6;
  b.tag = 78;
  // Due 2 s ahead: a loaded (or sanitized) run's handshake and warnings
  // take well under that, and the plans must outlive them.
  for (const FlowHint& hint : {a, b}) {
    std::string why_not;
    ASSERT_TRUE(
        endpoint.announce_ahead(r_address, 1 << 20, monotonic_ns() + 2 * kSecond, hint, &why_not))
        << why_not;
  }
  std::unique_ptr<ScriptedPeer> r;
  std::vector<std::uint32_t> plans;  // their numbers, in hint order
  std::atomic<bool> answered = false;
  std::thread answer([&] {
    r = std::make_unique<ScriptedPeer>(
        listener.accept_within(2 * kSecond), testing::loopback_key(),
        testing::ScriptedIdentity{.listen_port = listener.port(), .capabilities = wire::kCapPlans});
    if (r->answer_handshake()) {
      for (int i = 0; i < 20 && plans.size() < 2; ++i) {
        const auto message = r->receive(100 * kMs);
        if (message && std::holds_alternative<wire::Plan>(*message)) {
          plans.push_back(std::get<wire::Plan>(*message).number);
        }
      }
    }
    answered = true;
  });
  for (const std::int64_t t = monotonic_ns(); !answered && monotonic_ns() - t < 5 * kSecond;) {
    endpoint.progress(kMs);
  }
  answer.join();
  ASSERT_EQ(plans.size(), 2u);
  const auto warn_thrice = [&](std::uint32_t number) {
    for (int i = 0; i < 3; ++i) r->send(wire::PlanWarning{number});
  };

  warn_thrice(plans[0]);
  run_for(endpoint, 200 * kMs);
  ASSERT_EQ(planned.size(), 1u);
  EXPECT_EQ(planned[0].flow, 0u);
  EXPECT_EQ(planned[0].tag, a.tag);

  const auto payload = random_bytes(1 << 20, 3);
  endpoint.send(r_address, payload, a);
  const FlowHandle flow_b = endpoint.send(r_address, payload, b);
  run_for(endpoint, 50 * kMs);
  warn_thrice(plans[0]);
  warn_thrice(plans[1]);
  run_for(endpoint, 200 * kMs);
  ASSERT_EQ(planned.size(), 2u);
  EXPECT_EQ(planned[1].flow, flow_b);
  EXPECT_EQ(planned[1].tag, b.tag);
  const EndpointStats stats = endpoint.stats();
  EXPECT_EQ(stats.plans_sent, 2u);
  EXPECT_EQ(stats.plan_warnings_received, 2u);
  EXPECT_EQ(stats.protocol_errors, 0u);
}

// A receiver tells of a plan it cannot serve in time only a sender that
// reads such warnings: the same infeasible plan (1 MB due 10 ms after it
// starts, at 80 Mbit/s) from a scripted sender with and without bit 6.
TEST(HostilePeer, PlanWarningsGoOnlyToSendersThatReadThem) {
  for (const bool reads_warnings : {true, false}) {
    Endpoint receiver(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
    const std::uint32_t capabilities =
        wire::kCapPlans | (reads_warnings ? wire::kCapPlanWarnings : 0);
    ScriptedPeer sender(receiver.address().port, testing::loopback_key(),
                        {.capabilities = capabilities});
    ASSERT_TRUE(handshake_with(receiver, sender));
    sender.send(wire::Plan{3, 1 << 20, 50'000'000, 60'000'000, 0, 9});
    bool warned = false;
    std::thread reader([&] {
      for (int i = 0; i < 5 && !warned; ++i) {
        const auto message = sender.receive(100 * kMs);
        warned = message && std::holds_alternative<wire::PlanWarning>(*message) &&
                 std::get<wire::PlanWarning>(*message).number == 3;
      }
    });
    run_for(receiver, 600 * kMs);
    reader.join();
    const EndpointStats stats = receiver.stats();
    EXPECT_EQ(stats.plans_infeasible, 1u) << reads_warnings;
    EXPECT_EQ(stats.plan_warnings_sent, reads_warnings ? 1u : 0u);
    EXPECT_EQ(warned, reads_warnings);
  }
}

// A sender that sends a byte and then reports that its uplink gives the flow
// nothing: no ghost, no missed claim (an honest sender's earlier flows may
// hold its uplink that long), and no idle drop while it is held, but a
// drop with an Error once held for the sender hold timeout, so a Report
// cannot hold a posted receive and its buffer for ever.
TEST(HostilePeer, ReportOfZeroHoldsAReceiveOnlyUntilTheSenderHoldTimeout) {
  constexpr std::uint64_t kFlowBytes = 1 << 20;
  EndpointConfig config = testing::config_at("127.0.0.1", 80 * kMbps, nullptr);
  config.limits.idle_flow_timeout_ns = 300 * kMs;
  config.limits.sender_hold_timeout_ns = 1500 * kMs;
  Endpoint receiver(config);
  std::vector<std::byte> landing(kFlowBytes);
  const ReceiveHandle posted = receiver.post_receive(1, landing);
  ScriptedPeer control(receiver.address().port);
  ASSERT_TRUE(handshake_with(receiver, control));
  control.send(wire::Announce{1, kFlowBytes, 50'000'000, 1, 0, 0, 1});  // urgent, 50 ms
  RawPeer data(receiver.address().port);
  data.write(control.data_open(1, kFlowBytes));
  data.write(std::vector<std::uint8_t>(1, 0x5a));
  control.send(wire::Report{1, 0});
  const std::int64_t start = monotonic_ns();
  // Past the ghost grace and the idle timeout: still there, no ghost.
  run_for(receiver, 800 * kMs);
  EXPECT_EQ(receiver.stats().uplink_reports_received, 1u);
  EXPECT_EQ(receiver.stats().incoming_flows, 1u);
  EXPECT_EQ(receiver.stats().ghost_flows, 0u);
  EXPECT_EQ(receiver.test_receive(posted).state, FlowState::kPending);
  // Past the sender hold timeout: dropped, the receive failed, the buffer freed.
  while (receiver.stats().incoming_flows != 0 && monotonic_ns() - start < 4 * kSecond) {
    receiver.progress(kMs);
  }
  const std::int64_t dropped_after = monotonic_ns() - start;
  const EndpointStats stats = receiver.stats();
  EXPECT_EQ(stats.incoming_flows, 0u);
  EXPECT_EQ(stats.incoming_failed, 1u);
  EXPECT_EQ(stats.incoming_buffer_bytes, 0u);
  EXPECT_EQ(stats.ghost_flows, 0u);
  EXPECT_GE(dropped_after, 1500 * kMs);
  EXPECT_EQ(receiver.test_receive(posted).state, FlowState::kFailed);
}

}  // namespace
}  // namespace safs::runtime
