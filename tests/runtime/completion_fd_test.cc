// The completion descriptor: readable once a send or a posted receive ends
// (done or failed), not before; reading it resets it.
#include <poll.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdint>

#include "runtime/endpoint.h"
#include "runtime/test_support.h"

namespace safs::runtime {
namespace {

using testing::kMbps;
using testing::kMs;
using testing::kSecond;
using testing::LoopThread;
using testing::random_bytes;

bool readable(int fd, int timeout_ms) {
  pollfd p{fd, POLLIN, 0};
  return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN) != 0;
}

std::uint64_t drain(int fd) {
  std::uint64_t count = 0;
  return read(fd, &count, sizeof count) == sizeof count ? count : 0;
}

TEST(CompletionFd, BecomesReadableWhenASendAndAPostedReceiveEnd) {
  Endpoint receiver(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  EXPECT_NE(receiver.completion_fd(), sender.completion_fd());
  std::vector<std::byte> buffer(1 << 20);
  const ReceiveHandle receive = receiver.post_receive(5, buffer);
  EXPECT_FALSE(readable(receiver.completion_fd(), 0));
  LoopThread loop(receiver);
  const auto payload = random_bytes(1 << 20, 1);
  const FlowHandle flow = sender.send(receiver.address(), payload, FlowHint::background(5));
  EXPECT_FALSE(readable(sender.completion_fd(), 0));  // nothing ended yet
  // Driven by progress() until its descriptor says something ended.
  const std::int64_t start = monotonic_ns();
  while (!readable(sender.completion_fd(), 0) && monotonic_ns() - start < 10 * kSecond) {
    sender.progress(kMs);
  }
  EXPECT_EQ(sender.test(flow).state, FlowState::kDone);
  EXPECT_EQ(drain(sender.completion_fd()), 1u);
  EXPECT_FALSE(readable(sender.completion_fd(), 0));  // read resets it
  // The receiver's loop runs on its thread: poll() waits for it.
  EXPECT_TRUE(readable(receiver.completion_fd(), 2000));
  EXPECT_EQ(loop.call([&] { return receiver.test_receive(receive).state; }), FlowState::kDone);
  EXPECT_EQ(drain(receiver.completion_fd()), 1u);
}

TEST(CompletionFd, SignalsFailuresAndLatePostsTakenAtOnce) {
  Endpoint receiver(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  // A send to a port nobody listens on fails.
  const auto payload = random_bytes(1000, 2);
  const FlowHandle failing = receiver.send({"127.0.0.1", 1}, payload, FlowHint::background(1));
  const std::int64_t start = monotonic_ns();
  while (receiver.test(failing).state == FlowState::kPending &&
         monotonic_ns() - start < 15 * kSecond) {
    receiver.progress(kMs);
  }
  ASSERT_EQ(receiver.test(failing).state, FlowState::kFailed);
  EXPECT_TRUE(readable(receiver.completion_fd(), 0));
  EXPECT_GE(drain(receiver.completion_fd()), 1u);
  // A message held for a late post; the post completes at once and signals.
  LoopThread loop(receiver);
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  ASSERT_EQ(
      sender.wait(sender.send(receiver.address(), payload, FlowHint::background(8)), 10 * kSecond)
          .state,
      FlowState::kDone);
  EXPECT_FALSE(readable(receiver.completion_fd(), 0));  // held, not a posted receive
  std::vector<std::byte> buffer(1000);
  loop.call([&] { receiver.post_receive(8, buffer); });
  EXPECT_TRUE(readable(receiver.completion_fd(), 0));
}

}  // namespace
}  // namespace safs::runtime
