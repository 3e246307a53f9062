// Connections that stay unpaced (ContentionFallback::unpaced_connections): a
// socket once given a kernel pacing rate stays paced by TCP for good, so a
// flow that starts on a contended path takes a data connection that never
// was, and keeps it so. The Pacer reports what it did to its socket, the
// pool hands out connections by that, and next to an unmanaged bulk flow
// (a network namespace of the test's own) the sender opens one such
// connection for the contended path instead of reusing its paced one.
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
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

constexpr int kSequentialFlows = 6;
constexpr std::size_t kSequentialFlowBytes = 2'000'000;

// One sender's flows, one after another, to one receiver next to the bulk
// flow, with their slack short enough that each is granted the whole
// downlink and falls short of it. Runs in the child; exit 0: passed.
int sequential_flows_next_to_bulk(bool unpaced_connections) {
  BulkFlow bulk;
  if (!bulk.start()) {
    std::fprintf(stderr, "FAIL: the bulk flow did not start\n");
    return 1;
  }
  usleep(300'000);  // the bulk flow fills the bottleneck first
  Endpoint receiver(config_at("127.0.0.1", kLinkBps, nullptr));
  LoopThread receiver_loop(receiver);
  EndpointConfig sender_config = config_at("127.0.0.1", 1e10, nullptr);
  sender_config.contention_fallback.unpaced_connections = unpaced_connections;
  Endpoint sender(sender_config);
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

int contended_path_with_unpaced_connections() {
  if (const int skip = enter_bottlenecked_namespace(); skip != 0) return skip;
  if (const int failed = sequential_flows_next_to_bulk(false); failed != 0) return failed;
  return sequential_flows_next_to_bulk(true);
}

TEST(ContentionFallback, FlowsOnAContendedPathGoOnAConnectionTheKernelNeverPaced) {
  run_child(contended_path_with_unpaced_connections);
}

}  // namespace
}  // namespace safs::runtime::testing
