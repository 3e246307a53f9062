// Late posts: on an endpoint without a message handler, a message that came
// before its receive was posted is held, and the post takes it at once (the
// oldest for its tag, from the named sender if any); one still arriving is
// taken too. A buffer too small fails that receive clearly; the held
// messages are bounded and a flow beyond the bound is refused with an Error.
#include <gtest/gtest.h>

#include "runtime/endpoint.h"
#include "runtime/test_support.h"

namespace safs::runtime {
namespace {

using testing::checksum;
using testing::kMbps;
using testing::kMs;
using testing::kSecond;
using testing::LoopThread;
using testing::random_bytes;

FlowStatus send_and_wait(Endpoint& sender, const Endpoint& receiver,
                         const std::vector<std::byte>& payload, std::uint64_t tag) {
  const FlowHandle flow = sender.send(receiver.address(), payload, FlowHint::background(tag));
  return sender.wait(flow, 10 * kSecond);
}

TEST(LatePost, TakesAMessageThatCameBeforeIt) {
  Endpoint receiver(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  LoopThread loop(receiver);
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  const auto payload = random_bytes(300'001, 1);
  ASSERT_EQ(send_and_wait(sender, receiver, payload, 7).state, FlowState::kDone);
  EXPECT_EQ(loop.stats().unexpected_messages, 1u);
  EXPECT_EQ(loop.stats().unexpected_bytes, payload.size());
  std::vector<std::byte> buffer(400'000);
  const ReceiveStatus status = loop.call([&] {
    const ReceiveHandle receive = receiver.post_receive(7, buffer);
    return receiver.test_receive(receive);  // at once: no loop turn in between
  });
  ASSERT_EQ(status.state, FlowState::kDone) << status.error;
  EXPECT_EQ(status.bytes, payload.size());
  EXPECT_EQ(status.peer, sender.address().text());
  EXPECT_EQ(checksum(std::span(buffer).first(payload.size())), checksum(payload));
  EXPECT_EQ(loop.stats().unexpected_messages, 0u);
  EXPECT_EQ(loop.stats().unexpected_bytes, 0u);
}

TEST(LatePost, APostBeforeTheMessageStillTakesIt) {
  Endpoint receiver(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  std::vector<std::byte> buffer(5000);
  const ReceiveHandle receive = receiver.post_receive(3, buffer);
  LoopThread loop(receiver);
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  const auto payload = random_bytes(4000, 2);
  ASSERT_EQ(send_and_wait(sender, receiver, payload, 3).state, FlowState::kDone);
  const ReceiveStatus status = loop.call([&] { return receiver.test_receive(receive); });
  ASSERT_EQ(status.state, FlowState::kDone) << status.error;
  EXPECT_EQ(checksum(std::span(buffer).first(payload.size())), checksum(payload));
  EXPECT_EQ(loop.stats().unexpected_messages, 0u);
}

TEST(LatePost, TakesTheNamedSendersMessageThenTheOldest) {
  Endpoint receiver(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  LoopThread loop(receiver);
  Endpoint a(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  Endpoint b(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  const auto from_a = random_bytes(2000, 3);
  const auto from_b = random_bytes(2000, 4);
  ASSERT_EQ(send_and_wait(a, receiver, from_a, 9).state, FlowState::kDone);
  ASSERT_EQ(send_and_wait(b, receiver, from_b, 9).state, FlowState::kDone);
  std::vector<std::byte> first(2000), second(2000);
  const ReceiveStatus named = loop.call(
      [&] { return receiver.test_receive(receiver.post_receive(9, first, b.address())); });
  ASSERT_EQ(named.state, FlowState::kDone) << named.error;
  EXPECT_EQ(named.peer, b.address().text());
  EXPECT_EQ(checksum(first), checksum(from_b));
  const ReceiveStatus any =
      loop.call([&] { return receiver.test_receive(receiver.post_receive(9, second)); });
  ASSERT_EQ(any.state, FlowState::kDone) << any.error;
  EXPECT_EQ(checksum(second), checksum(from_a));
  // Nothing is left from b: a post naming it waits.
  std::vector<std::byte> third(2000);
  const ReceiveStatus waiting = loop.call(
      [&] { return receiver.test_receive(receiver.post_receive(9, third, b.address())); });
  EXPECT_EQ(waiting.state, FlowState::kPending);
}

TEST(LatePost, ABufferTooSmallFailsThatReceiveAndTheMessageStaysHeld) {
  Endpoint receiver(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  LoopThread loop(receiver);
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  const auto payload = random_bytes(3000, 5);
  ASSERT_EQ(send_and_wait(sender, receiver, payload, 4).state, FlowState::kDone);
  std::vector<std::byte> small(100), large(3000);
  const ReceiveStatus failed =
      loop.call([&] { return receiver.test_receive(receiver.post_receive(4, small)); });
  EXPECT_EQ(failed.state, FlowState::kFailed);
  EXPECT_NE(failed.error.find("has 3000 bytes, more than the posted buffer's 100"),
            std::string::npos)
      << failed.error;
  EXPECT_EQ(loop.stats().unexpected_messages, 1u);
  const ReceiveStatus taken =
      loop.call([&] { return receiver.test_receive(receiver.post_receive(4, large)); });
  ASSERT_EQ(taken.state, FlowState::kDone) << taken.error;
  EXPECT_EQ(checksum(large), checksum(payload));
}

TEST(LatePost, BeyondTheBoundNewFlowsAreRefusedWithAnError) {
  EndpointConfig config = testing::config_at("127.0.0.1", 1000 * kMbps, nullptr);
  config.endpoint_limits.max_unexpected_messages = 3;
  config.endpoint_limits.max_unexpected_bytes = 8000;
  Endpoint receiver(config);
  LoopThread loop(receiver);
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  const auto three_kb = random_bytes(3000, 6);
  const auto one_kb = random_bytes(1000, 7);
  EXPECT_EQ(send_and_wait(sender, receiver, three_kb, 1).state, FlowState::kDone);
  EXPECT_EQ(send_and_wait(sender, receiver, three_kb, 2).state, FlowState::kDone);
  const FlowStatus bytes = send_and_wait(sender, receiver, three_kb, 3);  // 9000 > 8000
  EXPECT_EQ(bytes.state, FlowState::kFailed);
  EXPECT_NE(bytes.error.find("more than 8000 bytes of messages nobody posted"), std::string::npos)
      << bytes.error;
  EXPECT_EQ(send_and_wait(sender, receiver, one_kb, 4).state, FlowState::kDone);
  const FlowStatus messages = send_and_wait(sender, receiver, one_kb, 5);  // a fourth
  EXPECT_EQ(messages.state, FlowState::kFailed);
  EXPECT_NE(messages.error.find("more than 3 messages nobody posted"), std::string::npos)
      << messages.error;
  EXPECT_EQ(loop.stats().unexpected_messages, 3u);
  EXPECT_EQ(loop.stats().refused_flows, 2u);
  // Taking one makes room again, on the same connection.
  std::vector<std::byte> buffer(3000);
  EXPECT_EQ(
      loop.call([&] { return receiver.test_receive(receiver.post_receive(1, buffer)); }).state,
      FlowState::kDone);
  EXPECT_EQ(send_and_wait(sender, receiver, one_kb, 5).state, FlowState::kDone);
  EXPECT_EQ(loop.stats().protocol_errors, 0u);
}

// A post while its message is still arriving takes the flow: the bytes so
// far are copied and the rest lands in the posted buffer.
TEST(LatePost, TakesAFlowStillArriving) {
  // 10 MB/s: 4 MB take about 400 ms, long enough to post in between.
  Endpoint receiver(testing::config_at("127.0.0.1", 80 * kMbps, nullptr));
  LoopThread loop(receiver);
  Endpoint sender(testing::config_at("127.0.0.1", 1000 * kMbps, nullptr));
  const auto payload = random_bytes(4 << 20, 8);
  const FlowHandle flow = sender.send(receiver.address(), payload, FlowHint::background(11));
  std::vector<std::byte> buffer(payload.size());
  ReceiveHandle receive = 0;
  ReceiveStatus at_post;
  for (std::int64_t t = monotonic_ns(); receive == 0 && monotonic_ns() - t < 5 * kSecond;) {
    sender.progress(kMs);
    loop.call([&] {
      const EndpointStats stats = receiver.stats();
      if (stats.incoming_flows != 1 || stats.data_bytes_received == 0) return;
      receive = receiver.post_receive(11, buffer);
      at_post = receiver.test_receive(receive);
    });
  }
  ASSERT_NE(receive, 0u) << "the flow never showed up in progress";
  EXPECT_EQ(at_post.state, FlowState::kPending);  // claimed, not yet whole
  ASSERT_EQ(sender.wait(flow, 10 * kSecond).state, FlowState::kDone);
  const ReceiveStatus status = loop.call([&] { return receiver.test_receive(receive); });
  ASSERT_EQ(status.state, FlowState::kDone) << status.error;
  EXPECT_EQ(checksum(buffer), checksum(payload));
  EXPECT_EQ(loop.stats().unexpected_messages, 0u);
  EXPECT_EQ(loop.stats().incoming_buffer_bytes, 0u);
}

}  // namespace
}  // namespace safs::runtime
