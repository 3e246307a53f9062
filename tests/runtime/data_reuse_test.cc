// Data connections reused across flows (EndpointConfig::data_reuse): a
// sender's finished flow leaves its connection idle for the next flow to the
// same peer, the receiver reads that flow's DataOpen on it, and every byte
// still lands where it belongs. Bounded on both sides, off on either side
// means a connection per flow, a kept connection that the receiver closed is
// replaced, and a kept connection carries only its own peer's flows.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/endpoint.h"
#include "runtime/scripted_peer.h"
#include "runtime/test_support.h"

namespace safs::runtime {
namespace {

using namespace safs::runtime::testing;  // NOLINT: the runtime tests' helpers

constexpr double kDownlinkBps = 2000 * kMbps;

EndpointConfig config(bool reuse = true) {
  EndpointConfig config = config_at("127.0.0.1", kDownlinkBps, nullptr);
  config.data_reuse.enabled = reuse;
  return config;
}

// Sends `count` payloads of `bytes` to `receiver`, `at_once` at a time, each
// into a receive posted there for its tag; checks each lands whole.
void send_batches(Endpoint& sender, Endpoint& receiver, LoopThread& receiver_loop, int count,
                  int at_once, std::size_t bytes) {
  static std::uint64_t next_tag = 1;
  for (int sent = 0; sent < count; sent += at_once) {
    std::vector<std::vector<std::byte>> payloads, buffers;
    std::vector<ReceiveHandle> receives;
    std::vector<FlowHandle> flows;
    for (int i = 0; i < at_once; ++i) {
      const std::uint64_t tag = next_tag++;
      payloads.push_back(random_bytes(bytes, tag));
      buffers.emplace_back(bytes);
      receives.push_back(
          receiver_loop.call([&] { return receiver.post_receive(tag, buffers.back()); }));
      flows.push_back(sender.send(receiver.address(), payloads.back(), FlowHint::background(tag)));
    }
    for (int i = 0; i < at_once; ++i) {
      const FlowStatus status = sender.wait(flows[i], 10 * kSecond);
      ASSERT_EQ(status.state, FlowState::kDone) << status.error;
      const ReceiveStatus received =
          receiver_loop.call([&] { return receiver.test_receive(receives[i]); });
      ASSERT_EQ(received.state, FlowState::kDone) << received.error;
      EXPECT_EQ(checksum(buffers[i]), checksum(payloads[i])) << "flow " << sent + i;
    }
  }
}

// Drives `endpoint` until `done()` or `timeout_ns`.
template <typename Done>
bool drive_until(Endpoint& endpoint, Done done, std::int64_t timeout_ns) {
  for (const std::int64_t start = monotonic_ns(); monotonic_ns() - start < timeout_ns;) {
    if (done()) return true;
    endpoint.progress(5 * kMs);
  }
  return done();
}

template <typename Done>
bool wait_until(Done done, std::int64_t timeout_ns) {
  for (const std::int64_t start = monotonic_ns(); monotonic_ns() - start < timeout_ns;) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return done();
}

TEST(DataReuse, SequentialFlowsToOnePeerShareOneConnection) {
  Endpoint receiver(config());
  LoopThread loop(receiver);
  Endpoint sender(config());
  send_batches(sender, receiver, loop, 10, 1, 300'001);
  const EndpointStats sent = sender.stats();
  EXPECT_EQ(sent.data_connections_opened, 1u);
  EXPECT_EQ(sent.data_connections_reused, 9u);
  EXPECT_EQ(sent.data_connections_idle, 1u);
  EXPECT_EQ(loop.stats().data_connections_kept, 1u);
  EXPECT_EQ(loop.stats().incoming_completed, 10u);
}

TEST(DataReuse, ConcurrentFlowsOpenTheirOwnThenReuseThem) {
  Endpoint receiver(config());
  LoopThread loop(receiver);
  Endpoint sender(config());
  send_batches(sender, receiver, loop, 9, 3, 200'000);
  const EndpointStats sent = sender.stats();
  EXPECT_EQ(sent.data_connections_opened, 3u);
  EXPECT_EQ(sent.data_connections_reused, 6u);
  EXPECT_EQ(sent.data_connections_idle, 3u);
}

TEST(DataReuse, OffOnEitherSideMeansAConnectionPerFlow) {
  for (const bool sender_reuses : {false, true}) {
    SCOPED_TRACE(sender_reuses ? "receiver off" : "sender off");
    Endpoint receiver(config(!sender_reuses));
    LoopThread loop(receiver);
    Endpoint sender(config(sender_reuses));
    send_batches(sender, receiver, loop, 4, 1, 100'000);
    EXPECT_EQ(sender.stats().data_connections_opened, 4u);
    EXPECT_EQ(sender.stats().data_connections_reused, 0u);
    EXPECT_EQ(sender.stats().data_connections_idle, 0u);
    // A receiver that keeps them closes each once its sender closes it.
    EXPECT_TRUE(wait_until([&] { return loop.stats().data_connections_kept == 0; }, kSecond));
  }
}

TEST(DataReuse, IdleConnectionsCloseAfterTheirTimeoutOnBothSides) {
  Endpoint receiver(config());
  LoopThread loop(receiver);
  EndpointConfig short_idle = config();
  short_idle.data_reuse.idle_timeout_ns = 100 * kMs;
  Endpoint sender(short_idle);
  send_batches(sender, receiver, loop, 1, 1, 50'000);
  EXPECT_EQ(sender.stats().data_connections_idle, 1u);
  EXPECT_TRUE(drive_until(
      sender, [&] { return sender.stats().data_connections_idle == 0; }, 2 * kSecond));
  EXPECT_TRUE(wait_until([&] { return loop.stats().data_connections_kept == 0; }, kSecond));
  send_batches(sender, receiver, loop, 1, 1, 50'000);
  EXPECT_EQ(sender.stats().data_connections_opened, 2u);
  EXPECT_EQ(sender.stats().data_connections_reused, 0u);
}

TEST(DataReuse, EachSideKeepsNoMoreThanItsBound) {
  EndpointConfig receiver_config = config();
  receiver_config.limits.max_idle_data_connections = 3;
  Endpoint receiver(receiver_config);
  LoopThread loop(receiver);
  EndpointConfig sender_config = config();
  sender_config.data_reuse.max_idle_per_peer = 2;
  Endpoint sender(sender_config);
  send_batches(sender, receiver, loop, 5, 5, 100'000);
  EXPECT_EQ(sender.stats().data_connections_opened, 5u);
  EXPECT_EQ(sender.stats().data_connections_idle, 2u);
  // The receiver kept 3, and closes the one the sender then dropped.
  EXPECT_TRUE(wait_until([&] { return loop.stats().data_connections_kept == 2; }, kSecond))
      << loop.stats().data_connections_kept;
}

// A receiver that advertises reuse but keeps none closes every connection
// after its flow, racing the sender's reuse: every flow still completes.
TEST(DataReuse, AConnectionTheReceiverClosedIsReplaced) {
  EndpointConfig receiver_config = config();
  receiver_config.limits.max_idle_data_connections = 0;
  Endpoint receiver(receiver_config);
  LoopThread loop(receiver);
  Endpoint sender(config());
  send_batches(sender, receiver, loop, 20, 2, 20'000);
  EXPECT_EQ(loop.stats().incoming_completed, 20u);
  EXPECT_EQ(loop.stats().incoming_failed, 0u);
  EXPECT_EQ(loop.stats().data_connections_kept, 0u);
  // Each flow ended on a connection of its own.
  EXPECT_EQ(sender.stats().data_connections_opened, 20u);
}

// ---- a kept connection against a scripted peer ----

std::vector<std::uint8_t> as_bytes(const std::vector<std::byte>& payload) {
  const auto* begin = reinterpret_cast<const std::uint8_t*>(payload.data());
  return {begin, begin + payload.size()};
}

bool await_done(ScriptedPeer& peer, std::uint64_t flow) {
  for (const std::int64_t start = monotonic_ns(); monotonic_ns() - start < 2 * kSecond;) {
    const auto message = peer.receive(100 * kMs);
    if (message && std::holds_alternative<wire::Done>(*message) &&
        std::get<wire::Done>(*message).flow == flow) {
      return true;
    }
  }
  return false;
}

class DataReuseAgainstPeers : public ::testing::Test {
 protected:
  DataReuseAgainstPeers() : receiver_(config()), loop_(receiver_) {
    receiver_.on_message([this](const IncomingMessage& message) {
      std::lock_guard lock(mutex_);
      delivered_.push_back(checksum(message.data));
    });
  }
  std::uint16_t port() const { return receiver_.address().port; }
  // Announces flow `flow` of `payload` and writes it on `data`; true on its Done.
  bool transfer(ScriptedPeer& peer, RawPeer& data, std::uint64_t flow,
                const std::vector<std::byte>& payload) {
    peer.send(wire::Announce{flow, payload.size(), wire::kNoDeadline, 0, 0, 0, flow});
    data.write(peer.data_open(flow, payload.size()));
    data.write(as_bytes(payload));
    return await_done(peer, flow);
  }
  std::vector<std::uint64_t> delivered() {
    std::lock_guard lock(mutex_);
    return delivered_;
  }

  Endpoint receiver_;
  LoopThread loop_;
  std::mutex mutex_;
  std::vector<std::uint64_t> delivered_;
};

TEST_F(DataReuseAgainstPeers, AKeptConnectionCarriesItsPeersNextFlows) {
  ScriptedPeer peer(port());
  ASSERT_TRUE(peer.handshake());
  RawPeer data(port());
  const auto first = random_bytes(70'000, 1), second = random_bytes(5, 2);
  ASSERT_TRUE(transfer(peer, data, 1, first));
  ASSERT_TRUE(transfer(peer, data, 2, second));
  EXPECT_TRUE(wait_until([&] { return delivered().size() == 2; }, kSecond));  // Done goes first
  EXPECT_EQ(delivered(), (std::vector<std::uint64_t>{checksum(first), checksum(second)}));
  EXPECT_EQ(loop_.stats().data_connections_kept, 1u);
}

// Flows that follow one another on one connection (wire::kCapDataFollow):
// each DataOpen right behind the last byte of the flow before, all written
// at once before any Done, the first of them smaller than a frame, so that
// a receiver reading past the first frame would take the next DataOpen for
// payload.
TEST_F(DataReuseAgainstPeers, FlowsThatFollowAtOnceLandWhole) {
  ScriptedPeer peer(port());
  ASSERT_TRUE(peer.handshake());
  const std::vector<std::vector<std::byte>> payloads = {random_bytes(100, 5), random_bytes(5, 6),
                                                        random_bytes(70'000, 7)};
  std::vector<std::uint8_t> stream;
  for (std::uint64_t flow = 1; flow <= payloads.size(); ++flow) {
    const auto& payload = payloads[flow - 1];
    peer.send(wire::Announce{flow, payload.size(), wire::kNoDeadline, 0, 0, 0, flow});
    const std::vector<std::uint8_t> open = frame(peer.data_open(flow, payload.size()));
    const std::vector<std::uint8_t> bytes = as_bytes(payload);
    stream.insert(stream.end(), open.begin(), open.end());
    stream.insert(stream.end(), bytes.begin(), bytes.end());
  }
  RawPeer data(port());
  data.write(stream);
  for (std::uint64_t flow = 1; flow <= payloads.size(); ++flow) {
    EXPECT_TRUE(await_done(peer, flow)) << "flow " << flow;
  }
  EXPECT_TRUE(wait_until([&] { return delivered().size() == payloads.size(); }, kSecond));
  EXPECT_EQ(delivered(), (std::vector<std::uint64_t>{checksum(payloads[0]), checksum(payloads[1]),
                                                     checksum(payloads[2])}));
  EXPECT_EQ(loop_.stats().incoming_failed, 0u);
}

// A connection whose next flow's DataOpen is already there is not idle: it
// is kept, and read, whatever the bound on idle ones (here none).
TEST(DataReuseAgainstAPeer, AConnectionAFlowFollowsOnIsKeptBeyondTheBound) {
  EndpointConfig receiver_config = config();
  receiver_config.limits.max_idle_data_connections = 0;
  Endpoint receiver(receiver_config);
  std::atomic<int> delivered = 0;
  receiver.on_message([&](const IncomingMessage&) { ++delivered; });
  LoopThread loop(receiver);
  ScriptedPeer peer(receiver.address().port);
  ASSERT_TRUE(peer.handshake());
  const auto first = random_bytes(2'000, 8), second = random_bytes(3'000, 9);
  peer.send(wire::Announce{1, first.size(), wire::kNoDeadline, 0, 0, 0, 1});
  peer.send(wire::Announce{2, second.size(), wire::kNoDeadline, 0, 0, 0, 2});
  std::vector<std::uint8_t> stream = frame(peer.data_open(1, first.size()));
  for (const std::vector<std::uint8_t>& part :
       {as_bytes(first), frame(peer.data_open(2, second.size())), as_bytes(second)}) {
    stream.insert(stream.end(), part.begin(), part.end());
  }
  RawPeer data(receiver.address().port);
  data.write(stream);
  EXPECT_TRUE(await_done(peer, 1));
  EXPECT_TRUE(await_done(peer, 2));
  EXPECT_TRUE(wait_until([&] { return delivered == 2; }, kSecond));
  EXPECT_EQ(loop.stats().incoming_failed, 0u);
  EXPECT_EQ(loop.stats().data_connections_kept, 0u);  // closed after the second: idle then
}

TEST_F(DataReuseAgainstPeers, AKeptConnectionTakesNothingButItsOwnPeersDataOpen) {
  ScriptedPeer peer(port());
  ASSERT_TRUE(peer.handshake());
  ScriptedPeer other(port());  // a second member of the job, on a control connection of its own
  ASSERT_TRUE(other.handshake());
  const auto payload = random_bytes(1000, 3);
  {  // a Hello on a kept data connection
    RawPeer data(port());
    ASSERT_TRUE(transfer(peer, data, 1, payload));
    data.write(hello_from(9));
    EXPECT_TRUE(data.closed_within(kSecond));
  }
  {  // a DataOpen naming another peer's control connection, with that peer's token
    RawPeer data(port());
    ASSERT_TRUE(transfer(peer, data, 2, payload));
    other.send(wire::Announce{1, payload.size(), wire::kNoDeadline, 0, 0, 0, 1});
    data.write(other.data_open(1, payload.size()));
    data.write(as_bytes(payload));
    EXPECT_TRUE(data.closed_within(kSecond));
  }
  {  // bytes that are no frame
    RawPeer data(port());
    ASSERT_TRUE(transfer(peer, data, 3, payload));
    data.write(std::vector<std::uint8_t>(64, 0xee));
    EXPECT_TRUE(data.closed_within(kSecond));
  }
  EXPECT_GE(loop_.stats().protocol_errors, 3u);
  EXPECT_EQ(loop_.stats().data_connections_kept, 0u);
  EXPECT_TRUE(wait_until([&] { return delivered().size() >= 3; }, kSecond));
  EXPECT_EQ(delivered().size(), 3u);  // the three legitimate flows, nothing else
}

TEST_F(DataReuseAgainstPeers, APeerKeepsAtMostItsBoundOpen) {
  ScriptedPeer peer(port());
  ASSERT_TRUE(peer.handshake());
  const std::uint32_t bound = PeerLimits{}.max_idle_data_connections;
  std::vector<std::unique_ptr<RawPeer>> connections;
  const auto payload = random_bytes(100, 4);
  for (std::uint64_t flow = 1; flow <= bound + 4; ++flow) {
    connections.push_back(std::make_unique<RawPeer>(port()));
    ASSERT_TRUE(transfer(peer, *connections.back(), flow, payload));
  }
  EXPECT_EQ(loop_.stats().data_connections_kept, bound);
  int closed = 0;
  for (auto& connection : connections) closed += connection->closed_within(50 * kMs) ? 1 : 0;
  EXPECT_EQ(closed, 4);
  // They all close with the peer's control connection.
  peer.raw().end_writes();
  EXPECT_TRUE(wait_until([&] { return loop_.stats().data_connections_kept == 0; }, 2 * kSecond));
}

}  // namespace
}  // namespace safs::runtime
