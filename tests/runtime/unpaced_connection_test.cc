// Connections that stay unpaced (ContentionFallback::unpaced_connections): a
// socket once given a kernel pacing rate stays paced by TCP for good, so a
// flow that starts on a contended path takes a data connection that never
// was, and keeps it so. The Pacer reports what it did to its socket, the
// pool hands out connections by that, and next to an unmanaged bulk flow
// (a network namespace of the test's own) the sender opens one such
// connection for the contended path instead of reusing its paced one, and
// flows started together there follow one another on one connection.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <vector>

#include "runtime/bottleneck_namespace.h"
#include "runtime/clock.h"
#include "runtime/data_connection_pool.h"
#include "runtime/endpoint.h"
#include "runtime/event_loop.h"
#include "runtime/pacer.h"
#include "runtime/test_support.h"

namespace safs::runtime::testing {
namespace {

TEST(Pacer, KernelRateSetOnlyOnceAFiniteRateWentToTheKernel) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  Pacer pacer(fd, PacingMode::kAuto);
  if (!pacer.kernel_paced()) GTEST_SKIP() << "this kernel refuses SO_MAX_PACING_RATE";
  pacer.set_rate(Pacer::kUnpaced, 0);
  EXPECT_FALSE(pacer.kernel_rate_set());
  pacer.set_rate(100e6, 0);
  EXPECT_TRUE(pacer.kernel_rate_set());
  pacer.set_rate(Pacer::kUnpaced, 0);  // lifting the limit does not undo it
  EXPECT_TRUE(pacer.kernel_rate_set());
  const int other = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(other, 0);
  Pacer userspace(other, PacingMode::kUserspace);
  userspace.set_rate(100e6, 0);
  userspace.set_rate(0, 0);
  EXPECT_FALSE(userspace.kernel_rate_set());
  close(fd);
  close(other);
}

// An idle connection's stand-in: one end of a socket pair, the other kept
// open and silent (as a receiver keeps a data connection).
struct IdleEnd {
  int fds[2] = {-1, -1};
  IdleEnd() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0); }
  ~IdleEnd() { close(fds[1]); }
  int ours() const { return fds[0]; }
};

TEST(DataConnectionPool, UnpacedFlowsTakeOnlyConnectionsTheKernelNeverPaced) {
  EventLoop loop;
  DataReuse config;
  config.max_idle_per_peer = 8;
  DataConnectionPool pool(loop, config);
  using Want = DataConnectionPool::Want;
  const PeerId peer = 1;
  IdleEnd a, b, c, d;
  pool.give(peer, {a.ours(), true}, 1);
  pool.give(peer, {b.ours(), false}, 2);
  pool.give(peer, {c.ours(), true}, 3);
  pool.give(2, {d.ours(), false}, 4);  // another peer's
  auto taken = pool.take(peer, Want::kUnpacedOnly);
  EXPECT_EQ(taken.fd, b.ours());
  EXPECT_FALSE(taken.kernel_rate_set);
  EXPECT_EQ(pool.take(peer, Want::kUnpacedOnly).fd, -1);  // only paced ones left
  pool.give(peer, taken, 5);
  // A paced flow takes the paced connection that went idle last, leaving the
  // unpaced one for the next flow that needs it...
  taken = pool.take(peer, Want::kPacedFirst);
  EXPECT_EQ(taken.fd, c.ours());
  EXPECT_TRUE(taken.kernel_rate_set);
  EXPECT_EQ(pool.take(peer, Want::kPacedFirst).fd, a.ours());
  // ...and an unpaced one when no other is left.
  EXPECT_EQ(pool.take(peer, Want::kPacedFirst).fd, b.ours());
  EXPECT_EQ(pool.take(peer, Want::kPacedFirst).fd, -1);
  EXPECT_EQ(pool.idle(), 1u);
  for (const IdleEnd* end : {&a, &b, &c}) close(end->ours());
}

// The bulk flow, a receiver behind the bottleneck it fills, and a sender.
struct NextToBulk {
  // The receiver keeps at most `receiver_idle_bound` idle data connections per peer.
  explicit NextToBulk(const EndpointConfig& sender_config,
                      std::uint32_t receiver_idle_bound = PeerLimits{}.max_idle_data_connections)
      : receiver(receiver_config(receiver_idle_bound)), sender(sender_config) {
    if (!started) std::fprintf(stderr, "FAIL: the bulk flow did not start\n");
    usleep(300'000);  // the bulk flow fills the bottleneck first
  }
  static EndpointConfig receiver_config(std::uint32_t idle_bound) {
    EndpointConfig config = config_at("127.0.0.1", kLinkBps, nullptr);
    config.limits.max_idle_data_connections = idle_bound;
    return config;
  }
  BulkFlow bulk;
  bool started = bulk.start();
  Endpoint receiver;
  LoopThread receiver_loop{receiver};
  Endpoint sender;
};

constexpr int kSequentialFlows = 6;
constexpr std::size_t kSequentialFlowBytes = 2'000'000;

// One sender's flows, one after another, to one receiver next to the bulk
// flow, with their slack short enough that each is granted the whole
// downlink and falls short of it. Runs in the child; exit 0: passed.
int sequential_flows_next_to_bulk(NextToBulk& path, bool unpaced_connections) {
  Endpoint& sender = path.sender;
  Endpoint& receiver = path.receiver;
  LoopThread& receiver_loop = path.receiver_loop;
  const std::vector<std::byte> payload = random_bytes(kSequentialFlowBytes, 11);
  for (int i = 0; i < kSequentialFlows; ++i) {
    const FlowHandle flow =
        sender.send(receiver.address(), payload, FlowHint::urgent_within(20 * kMs, i + 1));
    if (sender.wait(flow, 10 * kSecond).state != FlowState::kDone) {
      std::fprintf(stderr, "FAIL: flow %d did not complete\n", i + 1);
      return 1;
    }
  }
  const EndpointStats stats = sender.stats();
  receiver_loop.stop();
  std::fprintf(stderr, "unpaced connections %s: %llu contended paths, %llu connections opened\n",
               unpaced_connections ? "on" : "off",
               static_cast<unsigned long long>(stats.contended_paths),
               static_cast<unsigned long long>(stats.data_connections_opened));
  if (stats.contended_paths == 0) {
    std::fprintf(stderr, "FAIL: the bulk flow never made the path contended\n");
    return 1;
  }
  // The first flow's connection was paced at its grant before the path was
  // found contended. Later flows either reuse it (off) or go on one new
  // connection, which never gets a kernel pacing rate and so is reused by
  // every flow after it, whatever the path's state then (on).
  const std::uint64_t expected = unpaced_connections ? 2 : 1;
  return stats.data_connections_opened == expected ? 0 : 1;
}

// Runs `body` in a bottlenecked namespace of its own, next to the bulk flow,
// with the sender's option that `set` sets off, then on; the first failure
// or skip ends it.
using SenderOption = void (*)(EndpointConfig&, bool);
int off_then_on(SenderOption set, int (*body)(NextToBulk&, bool)) {
  if (const int skip = enter_bottlenecked_namespace(); skip != 0) return skip;
  for (const bool on : {false, true}) {
    EndpointConfig sender_config = config_at("127.0.0.1", 1e10, nullptr);
    set(sender_config, on);
    NextToBulk path(sender_config);
    if (!path.started) return 1;
    if (const int failed = body(path, on); failed != 0) return failed;
  }
  return 0;
}

TEST(ContentionFallback, FlowsOnAContendedPathGoOnAConnectionTheKernelNeverPaced) {
  run_child([] {
    return off_then_on([](EndpointConfig& config,
                          bool on) { config.contention_fallback.unpaced_connections = on; },
                       sequential_flows_next_to_bulk);
  });
}

// Flows one after another (as sequential_flows_next_to_bulk sends them)
// until the sender finds the path contended; false, with a message, if a
// flow fails or it never does.
bool warm_up_to_contention(NextToBulk& path) {
  const std::vector<std::byte> warm_up = random_bytes(kSequentialFlowBytes, 11);
  for (int i = 0; i < kSequentialFlows && path.sender.stats().contended_paths == 0; ++i) {
    const FlowHandle flow = path.sender.send(path.receiver.address(), warm_up,
                                             FlowHint::urgent_within(20 * kMs, i + 1));
    if (path.sender.wait(flow, 10 * kSecond).state != FlowState::kDone) {
      std::fprintf(stderr, "FAIL: warm-up flow %d did not complete\n", i + 1);
      return false;
    }
  }
  if (path.sender.stats().contended_paths == 0) {
    std::fprintf(stderr, "FAIL: the bulk flow never made the path contended\n");
    return false;
  }
  return true;
}

// Writes this network namespace's net.ipv4.tcp_slow_start_after_idle.
bool set_idle_restart(bool on) {
  std::FILE* file = std::fopen("/proc/sys/net/ipv4/tcp_slow_start_after_idle", "w");
  if (file == nullptr) return false;
  const bool written = std::fputs(on ? "1" : "0", file) >= 0;
  return std::fclose(file) == 0 && written;
}

// A contended path warns once of Linux's restart after idle where it is on
// (SendSide::warn_of_idle_restart), and not where the namespace turned it
// off. Runs in the child; exit 0: passed.
int warns_of_idle_restart() {
  if (const int skip = enter_bottlenecked_namespace(); skip != 0) return skip;
  for (const bool restart : {false, true}) {
    if (!set_idle_restart(restart)) {
      std::fprintf(stderr, "FAIL: cannot set net.ipv4.tcp_slow_start_after_idle\n");
      return 1;
    }
    NextToBulk path(config_at("127.0.0.1", 1e10, nullptr));
    if (!path.started || !warm_up_to_contention(path)) return 1;
    const std::uint64_t warnings = path.sender.stats().idle_restart_warnings;
    std::fprintf(stderr, "restart after idle %s: %llu warnings\n", restart ? "on" : "off",
                 static_cast<unsigned long long>(warnings));
    if (warnings != (restart ? 1u : 0u)) return 1;
  }
  return 0;
}

// On a contended path flows go unpaced, and are judged for risk at what TCP
// delivers them (SendSide::expected_rate_bps): next to the bulk flow, 4 MB
// due in 250 ms (at the whole 200 Mbit/s downlink 160 ms; at the half TCP
// gives it, 320) is reported at risk, and the same due in 5 s is not. Before,
// an unpaced flow was never judged. Runs in the child; exit 0: passed.
int unpaced_flows_judged_at_what_they_get() {
  if (const int skip = enter_bottlenecked_namespace(); skip != 0) return skip;
  NextToBulk path(config_at("127.0.0.1", 1e10, nullptr));
  if (!path.started || !warm_up_to_contention(path)) return 1;
  std::vector<FlowRisk> at_risk;
  path.sender.on_risk([&](const FlowRisk& risk) { at_risk.push_back(risk); });
  const std::vector<std::byte> payload = random_bytes(4'000'000, 300);
  const FlowHandle pressed =
      path.sender.send(path.receiver.address(), payload, FlowHint::urgent_within(250 * kMs, 300));
  const bool pressed_done = path.sender.wait(pressed, 10 * kSecond).state == FlowState::kDone;
  const FlowHandle relaxed =
      path.sender.send(path.receiver.address(), payload, FlowHint::urgent_within(5 * kSecond, 301));
  const bool relaxed_done = path.sender.wait(relaxed, 10 * kSecond).state == FlowState::kDone;
  const auto report_of = [&](FlowHandle flow) {
    return std::find_if(at_risk.begin(), at_risk.end(),
                        [&](const FlowRisk& risk) { return risk.flow == flow; });
  };
  if (report_of(pressed) == at_risk.end() || report_of(relaxed) != at_risk.end()) {
    std::fprintf(stderr, "FAIL: due in 250 ms %s, due in 5 s %s\n",
                 report_of(pressed) == at_risk.end() ? "not reported" : "reported",
                 report_of(relaxed) == at_risk.end() ? "not reported" : "reported");
    return 1;
  }
  // Reported on a rate it was measured to get, below what it needed (before
  // its deadline: a rate of 0 would be a report only for being late).
  const FlowRisk& risk = *report_of(pressed);
  std::fprintf(stderr, "due in 250 ms reported at %.0f Mbit/s of %.0f needed\n",
               risk.rate_bps / 1e6, risk.needed_bps / 1e6);
  if (!pressed_done || !relaxed_done || !(risk.rate_bps > 0) || !std::isfinite(risk.rate_bps) ||
      risk.rate_bps >= risk.needed_bps) {
    return 1;
  }
  // The next pressed flow on the path is judged at what the last one got
  // before it has a measurement of its own (three 20 ms windows): reported
  // within two windows of its start, where it alone could not be.
  const std::int64_t sent_ns = monotonic_ns();
  const FlowHandle next =
      path.sender.send(path.receiver.address(), payload, FlowHint::urgent_within(250 * kMs, 302));
  const bool next_done = path.sender.wait(next, 10 * kSecond).state == FlowState::kDone;
  if (report_of(next) == at_risk.end()) {
    std::fprintf(stderr, "FAIL: the next flow due in 250 ms was not reported\n");
    return 1;
  }
  const FlowRisk& next_risk = *report_of(next);
  const std::int64_t after_ns = next_risk.reported_at_ns - sent_ns;
  std::fprintf(stderr, "the next reported %.1f ms after its send, at %.0f Mbit/s of %.0f needed\n",
               static_cast<double>(after_ns) / 1e6, next_risk.rate_bps / 1e6,
               next_risk.needed_bps / 1e6);
  return next_done && after_ns < 2 * ContentionFallback{}.window_ns && next_risk.rate_bps > 0 &&
                 next_risk.rate_bps < next_risk.needed_bps
             ? 0
             : 1;
}

// The slacks of the flows that start at once below, in send order: the
// first is due first, so each of the others may follow it
// (ContentionFallback::one_connection), and they are due in the reverse of
// their send order.
constexpr std::int64_t kConcurrentSlacksMs[] = {100, 500, 400, 300, 200};
constexpr std::size_t kConcurrentFlowBytes = 1'000'000;

// A flow that starts while the one before it has written all its bytes and
// awaits its Done (a round trip of the bulk flow's queue) takes that flow's
// connection at once. Exit status as below.
int follows_a_flow_written_out(Endpoint& sender, Endpoint& receiver, LoopThread& receiver_loop) {
  const std::vector<std::byte> first = random_bytes(kConcurrentFlowBytes, 200);
  const std::vector<std::byte> second = random_bytes(kConcurrentFlowBytes, 201);
  std::vector<std::byte> first_landed(first.size()), second_landed(second.size());
  const ReceiveHandle first_receive =
      receiver_loop.call([&] { return receiver.post_receive(200, first_landed); });
  const ReceiveHandle second_receive =
      receiver_loop.call([&] { return receiver.post_receive(201, second_landed); });
  const FlowHandle a =
      sender.send(receiver.address(), first, FlowHint::urgent_within(kSecond, 200));
  const std::int64_t start = monotonic_ns();
  while (sender.test(a).sent_bytes < first.size() && monotonic_ns() - start < 10 * kSecond) {
    sender.progress(kMs);
  }
  if (sender.test(a).state != FlowState::kPending) {
    std::fprintf(stderr,
                 "FAIL: the first flow's Done came before its last byte was seen written\n");
    return 1;
  }
  const EndpointStats before = sender.stats();
  const FlowHandle b =
      sender.send(receiver.address(), second, FlowHint::urgent_within(kSecond, 201));
  const bool done = sender.wait(a, 10 * kSecond).state == FlowState::kDone &&
                    sender.wait(b, 10 * kSecond).state == FlowState::kDone;
  const EndpointStats after = sender.stats();
  const bool landed =
      receiver_loop.call([&] { return receiver.test_receive(first_receive); }).state ==
          FlowState::kDone &&
      receiver_loop.call([&] { return receiver.test_receive(second_receive); }).state ==
          FlowState::kDone &&
      checksum(first_landed) == checksum(first) && checksum(second_landed) == checksum(second);
  receiver_loop.stop();
  std::fprintf(stderr, "a flow started behind one written out: %llu followed, %llu opened\n",
               static_cast<unsigned long long>(after.flows_followed - before.flows_followed),
               static_cast<unsigned long long>(after.data_connections_opened -
                                               before.data_connections_opened));
  return done && landed && after.flows_followed == before.flows_followed + 1 &&
                 after.data_connections_opened == before.data_connections_opened
             ? 0
             : 1;
}

// Next to the bulk flow, once the path is found contended, five flows start
// at once into receives posted for them. With one_connection the last four
// wait for the first and follow it on its connection, in deadline order:
// when the one due second is done, the one due last has not sent a byte.
// Without, each opens a connection of its own. Either way every payload
// lands whole. With it, a flow started behind one written out then follows
// it too (above). Runs in the child; exit 0: passed.
// With `receiver_keeps` false only that every payload lands whole is checked.
int flows_started_together(NextToBulk& path, bool one_connection, bool receiver_keeps) {
  Endpoint& sender = path.sender;
  Endpoint& receiver = path.receiver;
  LoopThread& receiver_loop = path.receiver_loop;
  if (!warm_up_to_contention(path)) return 1;
  const EndpointStats before = sender.stats();
  constexpr std::size_t kFlows = std::size(kConcurrentSlacksMs);
  std::vector<std::vector<std::byte>> payloads, buffers;
  std::vector<ReceiveHandle> receives;
  std::vector<FlowHandle> flows;
  payloads.reserve(kFlows);
  buffers.reserve(kFlows);
  for (std::size_t i = 0; i < kFlows; ++i) {
    const std::uint64_t tag = 100 + i;
    payloads.push_back(random_bytes(kConcurrentFlowBytes, tag));
    buffers.emplace_back(kConcurrentFlowBytes);
    receives.push_back(receiver_loop.call([&] { return receiver.post_receive(tag, buffers[i]); }));
  }
  for (std::size_t i = 0; i < kFlows; ++i) {
    flows.push_back(sender.send(receiver.address(), payloads[i],
                                FlowHint::urgent_within(kConcurrentSlacksMs[i] * kMs, 100 + i)));
  }
  // flows[4] is due second: flows[1], due last, follows after flows[3] and flows[2].
  if (sender.wait(flows[4], 20 * kSecond).state != FlowState::kDone) {
    std::fprintf(stderr, "FAIL: the flow due second did not complete\n");
    return 1;
  }
  const std::uint64_t last_sent_early = sender.test(flows[1]).sent_bytes;
  for (std::size_t i = 0; i < kFlows; ++i) {
    const FlowStatus status = sender.wait(flows[i], 20 * kSecond);
    const ReceiveStatus received =
        receiver_loop.call([&] { return receiver.test_receive(receives[i]); });
    if (status.state != FlowState::kDone || received.state != FlowState::kDone ||
        checksum(buffers[i]) != checksum(payloads[i])) {
      std::fprintf(stderr, "FAIL: flow %zu did not land whole (%s)\n", i, status.error.c_str());
      return 1;
    }
  }
  const EndpointStats after = sender.stats();
  const std::uint64_t followed = after.flows_followed - before.flows_followed;
  const std::uint64_t opened = after.data_connections_opened - before.data_connections_opened;
  std::fprintf(stderr,
               "one connection %s: %llu flows followed, %llu connections opened, the last "
               "had sent %llu bytes when the second was done\n",
               one_connection ? "on" : "off", static_cast<unsigned long long>(followed),
               static_cast<unsigned long long>(opened),
               static_cast<unsigned long long>(last_sent_early));
  if (!receiver_keeps) return 0;
  if (!one_connection) return followed == 0 && opened >= kFlows - 1 ? 0 : 1;
  if (followed != kFlows - 1 || opened > 1 || last_sent_early != 0) return 1;
  return follows_a_flow_written_out(sender, receiver, receiver_loop);
}

int concurrent_flows_next_to_bulk(NextToBulk& path, bool one_connection) {
  return flows_started_together(path, one_connection, /*receiver_keeps=*/true);
}

// A receiver that keeps no idle connection closes each as its flow ends,
// unless the next flow's DataOpen is already there: a flow that followed
// onto one closed before its DataOpen came loses its bytes and starts over
// on a new connection. Every payload still lands whole.
int followers_of_a_receiver_that_keeps_none() {
  if (const int skip = enter_bottlenecked_namespace(); skip != 0) return skip;
  NextToBulk path(config_at("127.0.0.1", 1e10, nullptr), /*receiver_idle_bound=*/0);
  if (!path.started) return 1;
  return flows_started_together(path, /*one_connection=*/true, /*receiver_keeps=*/false);
}

TEST(ContentionFallback, FlowsStartedTogetherOnAContendedPathFollowOneAnother) {
  run_child([] {
    return off_then_on(
        [](EndpointConfig& config, bool on) { config.contention_fallback.one_connection = on; },
        concurrent_flows_next_to_bulk);
  });
}

TEST(ContentionFallback, FlowsThatFollowOntoAConnectionTheReceiverClosesStartOver) {
  run_child(followers_of_a_receiver_that_keeps_none);
}

TEST(ContentionFallback, UnpacedFlowsAreJudgedForRiskAtWhatTheyGet) {
  run_child(unpaced_flows_judged_at_what_they_get);
}

TEST(ContentionFallback, AContendedPathWarnsOfRestartAfterIdle) {
  run_child(warns_of_idle_restart);
}

}  // namespace
}  // namespace safs::runtime::testing
