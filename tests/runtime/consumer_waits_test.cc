// A waiting consumer outranks its sender's timestamp: a transfer told it may
// take 20 s goes at the rate just in time gives it, beside a background flow
// into the same receiver, until the computation that posted its receive
// blocks on it (Endpoint::consumer_waits); then it is due now.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "runtime/endpoint.h"
#include "runtime/test_support.h"

namespace safs::runtime {
namespace {

using testing::LoopThread;
constexpr std::int64_t kMs = testing::kMs;
constexpr std::int64_t kSecond = testing::kSecond;

ReceiveStatus wait_receive(LoopThread& loop, Endpoint& receiver, ReceiveHandle receive,
                           std::int64_t timeout_ns) {
  const std::int64_t until = monotonic_ns() + timeout_ns;
  for (;;) {
    const ReceiveStatus status = loop.call([&] { return receiver.test_receive(receive); });
    if (status.state != FlowState::kPending || monotonic_ns() >= until) return status;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

TEST(ConsumerWaits, AWaitedTransferIsDueNow) {
  constexpr double kDownlinkBps = 200 * testing::kMbps;  // 25 MB/s
  Endpoint receiver(testing::config_at("127.0.0.1", kDownlinkBps, nullptr));
  std::vector<std::byte> bulk_buffer(60'000'000);
  std::vector<std::byte> urgent_buffer(2'000'000);
  const ReceiveHandle bulk_receive = receiver.post_receive(1, bulk_buffer);
  const ReceiveHandle urgent_receive = receiver.post_receive(2, urgent_buffer);
  LoopThread loop(receiver);
  Endpoint bulk_sender(testing::config_at("127.0.0.1", kDownlinkBps, nullptr));
  Endpoint urgent_sender(testing::config_at("127.0.0.1", kDownlinkBps, nullptr));
  LoopThread bulk_loop(bulk_sender);
  LoopThread urgent_loop(urgent_sender);
  const auto bulk = testing::random_bytes(bulk_buffer.size(), 1);  // 2.4 s of the downlink
  const auto urgent = testing::random_bytes(urgent_buffer.size(), 2);
  bulk_loop.call(
      [&] { return bulk_sender.send(receiver.address(), bulk, FlowHint::background(1)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  urgent_loop.call([&] {
    return urgent_sender.send(receiver.address(), urgent, FlowHint::urgent_within(20 * kSecond, 2));
  });
  // Just in time: 2 MB in 20 s is 0.8 Mbit/s; the background takes the rest.
  EXPECT_EQ(wait_receive(loop, receiver, urgent_receive, 400 * kMs).state, FlowState::kPending);
  EXPECT_FALSE(loop.call([&] { return receiver.consumer_waits(bulk_receive); }))
      << "a background flow has no deadline to move";
  const std::int64_t waited_ns = monotonic_ns();
  EXPECT_TRUE(loop.call([&] { return receiver.consumer_waits(urgent_receive); }));
  const ReceiveStatus done = wait_receive(loop, receiver, urgent_receive, 10 * kSecond);
  ASSERT_EQ(done.state, FlowState::kDone) << done.error;
  // What was left of 2 MB at most of the downlink takes 80 ms; the test
  // allows a loaded machine's scheduling.
  EXPECT_LT(monotonic_ns() - waited_ns, 600 * kMs);
  EXPECT_EQ(testing::checksum(urgent_buffer), testing::checksum(urgent));
  EXPECT_EQ(loop.stats().consumer_waits, 1u);
  EXPECT_FALSE(loop.call([&] { return receiver.consumer_waits(urgent_receive); }))
      << "done: nothing left to move";
  const ReceiveStatus bulk_done = wait_receive(loop, receiver, bulk_receive, 20 * kSecond);
  ASSERT_EQ(bulk_done.state, FlowState::kDone) << bulk_done.error;
  EXPECT_EQ(testing::checksum(bulk_buffer), testing::checksum(bulk));
}

}  // namespace
}  // namespace safs::runtime
