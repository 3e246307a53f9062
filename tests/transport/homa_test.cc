// Homa's claims as tests that can fail: short messages cut through long ones,
// bounded receiver queues in an incast, exactly-once delivery under loss,
// SRPT order at receiver and sender, determinism, one grant per sender, and
// FIFO grants against starvation.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "support/experiments.h"
#include "transport/homa/homa_header.h"
#include "transport/homa/homa_transport.h"

namespace safs {
namespace {

using testing::add_flow;

TEST(HomaHeader, EveryFieldOfEveryMessageSurvivesTheRoundTrip) {
  Packet data;
  homa_header::put_data(data, {5'000'000, 61'440});
  EXPECT_EQ(homa_header::get_data(data).message_length, 5'000'000u);
  EXPECT_EQ(homa_header::get_data(data).unscheduled_bytes, 61'440u);

  Packet grant;
  homa_header::put_grant(grant, {std::uint64_t{1} << 40, 3});
  EXPECT_EQ(homa_header::get_grant(grant).offset, std::uint64_t{1} << 40);
  EXPECT_EQ(homa_header::get_grant(grant).priority, 3);

  Packet resend;
  homa_header::put_resend(resend, {123'456, 8192, {40'960, 2}});
  const homa_header::ResendFields r = homa_header::get_resend(resend);
  EXPECT_EQ(r.offset, 123'456u);
  EXPECT_EQ(r.length, 8192u);
  EXPECT_EQ(r.grant.offset, 40'960u);
  EXPECT_EQ(r.grant.priority, 2);
}

ExperimentConfig homa_star(int hosts, std::uint32_t mtu = 4096) {
  ExperimentConfig config = testing::star(hosts, mtu);
  config.transport = "homa";
  return config;
}

const HomaTransport& homa(const Experiment& e) {
  return dynamic_cast<const HomaTransport&>(e.transport());
}

std::vector<std::uint32_t> completion_order(const Experiment& e) {
  std::vector<std::uint32_t> ids;
  for (const FlowRecord& r : e.recorder().records()) ids.push_back(r.spec.id);
  std::sort(ids.begin(), ids.end(), [&](std::uint32_t a, std::uint32_t b) {
    return e.recorder().records()[a].finish_ps < e.recorder().records()[b].finish_ps;
  });
  return ids;
}

TEST(Homa, DerivedRttBytesIsOneRoundTripOfFullPackets) {
  Experiment e(homa_star(3));
  const HomaTransport& h = homa(e);
  // 100 Gbit/s, 1 us links, 4096 + 78 B packets: data out 2.668 us, grant back
  // 2.012 us; 4.68 us / 0.334 us per packet -> 15 packets.
  EXPECT_EQ(h.rtt_bytes(), 15u * 4096);
  EXPECT_EQ(h.unsched_bytes(), h.rtt_bytes());
  EXPECT_EQ(h.max_incoming_bytes(), 8 * h.rtt_bytes());
  EXPECT_EQ(h.max_sched_priority(), 3);
  EXPECT_EQ(h.unsched_priority(200), 7);
  EXPECT_EQ(h.unsched_priority(201), 6);
  EXPECT_EQ(h.unsched_priority(8192), 5);
  EXPECT_EQ(h.unsched_priority(15001), 4);
}

TEST(Homa, ShortMessageCutsThroughALongTransferToTheSameReceiver) {
  ExperimentConfig config = homa_star(3);
  add_flow(config, 1, 0, 20'000'000);                // 0: long, 1.6 ms alone
  add_flow(config, 2, 0, 8192, 300 * kPsPerUs);      // 1: short, other sender
  add_flow(config, 1, 0, 8192, 700 * kPsPerUs);      // 2: short, same sender (sender SRPT)
  add_flow(config, 2, 0, 100'000, 1000 * kPsPerUs);  // 3: medium, needs grants
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  const auto& r = e.recorder().records();
  EXPECT_LT(r[1].slowdown(), 1.5) << "short message queued behind the long one";
  EXPECT_LT(r[2].slowdown(), 1.5) << "sender did not serve its shortest message first";
  EXPECT_LT(r[3].slowdown(), 1.5) << "scheduled message did not preempt the long one";
  // The long transfer keeps the link busy: it loses little more than the others' bytes.
  EXPECT_LT(r[0].slowdown(), 1.05);
}

// The switch port that feeds host 0.
const Port& port_to_host0(Experiment& e) {
  for (const auto& port : e.network().ports()) {
    if (port->name() == "switch->host0") return *port;
  }
  throw std::logic_error("no port to host0");
}

struct IncastResult {
  NetworkTotals net;
  std::uint64_t steady_queue = 0;  // largest queue to host 0 once the unscheduled burst drained
  TimePs last_finish = 0;
  bool complete = false;
};

IncastResult run_incast(ExperimentConfig config) {
  Experiment e(config);
  IncastResult result;
  // Sample the queue every 2 us from 100 us on (the burst drains in ~80 us).
  for (TimePs t = 100 * kPsPerUs; !e.recorder().all_complete() && t < 5 * kPsPerMs;
       t += 2 * kPsPerUs) {
    e.run_until(t);
    result.steady_queue = std::max(result.steady_queue, port_to_host0(e).queue().bytes());
  }
  e.run();
  result.net = e.network_totals();
  result.complete = e.recorder().all_complete();
  for (const FlowRecord& r : e.recorder().records()) {
    result.last_finish = std::max(result.last_finish, r.finish_ps);
  }
  return result;
}

TEST(Homa, SixteenToOneIncastKeepsTheReceiverQueueBounded) {
  const std::uint32_t mtu = 4096, header = 78;
  ExperimentConfig config = homa_star(17, mtu);
  config.header_bytes = header;
  config.network.switches.port_buffer_bytes = 1'000'000;
  const std::uint64_t size = 1'000'000;
  for (int s = 1; s <= 16; ++s) add_flow(config, s, 0, size);
  std::uint64_t rtt_bytes = 0, max_incoming = 0, unsched = 0;
  {
    Experiment probe(config);
    rtt_bytes = homa(probe).rtt_bytes();
    max_incoming = homa(probe).max_incoming_bytes();
    unsched = homa(probe).unsched_bytes();
  }
  EXPECT_EQ(max_incoming, 8 * rtt_bytes);
  const IncastResult r = run_incast(config);

  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.net.queue_drops, 0u);
  // The receiver never grants beyond max_incoming (overcommitment x
  // RTTbytes); the unscheduled bytes of all 16 and one FIFO grant come on top.
  const std::uint64_t fifo = 3 * mtu;  // 10 000 B rounded up to packets
  const std::uint64_t bound = testing::wire_bytes(max_incoming + 16 * unsched + fifo, mtu, header);
  EXPECT_LT(r.net.max_switch_queue_bytes, bound);
  EXPECT_GT(r.net.max_switch_queue_bytes, 8 * unsched) << "the incast did not happen";
  // Once the unscheduled burst has drained, only granted bytes queue.
  EXPECT_LE(r.steady_queue, testing::wire_bytes(max_incoming + fifo + mtu, mtu, header));

  // And the receiver link stays busy: within 5% of all wire bytes back to back.
  const TimePs ideal =
      serialization_ps(16 * testing::wire_bytes(size, mtu, header), 100'000'000'000) +
      2 * kPsPerUs;  // the two links' propagation
  EXPECT_GE(r.last_finish, ideal);
  EXPECT_LE(static_cast<double>(r.last_finish), 1.05 * static_cast<double>(ideal));
}

TEST(Homa, MaxIncomingCapsGrantsWhenWindowsAddUpToMore) {
  const std::uint32_t mtu = 4096, header = 78;
  ExperimentConfig config = homa_star(17, mtu);
  const std::uint64_t rtt_bytes = 15 * 4096;
  // Windows of 4 RTTbytes: eight active messages would have 4 x max_incoming
  // outstanding. (A deeper buffer: before the receiver has heard of all 16
  // messages, the first few get large windows on top of the others' unknown
  // unscheduled bytes, as in the module.)
  config.network.switches.port_buffer_bytes = 2'000'000;
  config.transport_params["grant_window_bytes"] = 4 * rtt_bytes;
  for (int s = 1; s <= 16; ++s) add_flow(config, s, 0, 1'000'000);
  const IncastResult r = run_incast(config);
  ASSERT_TRUE(r.complete);
  EXPECT_EQ(r.net.queue_drops, 0u);
  EXPECT_LE(r.steady_queue, testing::wire_bytes(8 * rtt_bytes + 4 * mtu, mtu, header));

  // The module's dynamic window (max_incoming / (active + 1)) stays within it too.
  config.transport_params.erase("grant_window_bytes");
  config.transport_params["dynamic_window"] = 1;
  const IncastResult d = run_incast(config);
  ASSERT_TRUE(d.complete);
  EXPECT_EQ(d.net.queue_drops, 0u);
  EXPECT_LE(d.steady_queue, testing::wire_bytes(8 * rtt_bytes + 4 * mtu, mtu, header));
}

TEST(Homa, EveryByteArrivesExactlyOnceUnderOnePercentLossOnEveryLink) {
  ExperimentConfig config = homa_star(9, 1500);
  config.network.link_loss_rate = 0.01;  // data, grants, resends, acks alike
  config.seed = 11;
  const std::uint64_t sizes[] = {1, 1499, 1500, 1501, 20'000, 300'000, 3'000'000, 5'000'000};
  int i = 0;
  for (const std::uint64_t size : sizes) {
    add_flow(config, 1 + i % 4, 0, size, i * 10 * kPsPerUs);
    ++i;
  }
  // An 8-to-1 incast to another receiver, so grants are contended and lost too.
  for (int s = 1; s <= 8; ++s) add_flow(config, s, 5 + s % 4, 400'000 + 1000 * s, 50 * kPsPerUs);
  // 200 single-packet messages: at ~2% loss per path, some lose their only
  // packet, which only the sender's probe (NEED_ACK -> UNKNOWN) can recover.
  for (int k = 0; k < 200; ++k) {
    add_flow(config, 1 + k % 4, k % 3 == 0 ? 0 : 5 + k % 4, 1 + 7 * static_cast<std::uint64_t>(k),
             k * kPsPerUs);
  }
  Experiment e(config);
  e.run();

  const NetworkTotals net = e.network_totals();
  const TransportStats stats = e.transport().stats();
  EXPECT_GT(net.wire_losses, 100u) << "the test must actually lose packets";
  EXPECT_GT(stats.retransmissions, 0u);
  EXPECT_GT(homa(e).resend_packets(), 0u);
  // Both recovery paths were needed: receiver timeouts for gaps and tails,
  // sender probes for messages whose every packet was lost.
  EXPECT_GT(homa(e).resend_rounds(), 0u);
  EXPECT_GT(homa(e).sender_probes(), 0u);
  EXPECT_GT(homa(e).unknown_replies(), 0u);
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_TRUE(r.complete()) << "flow " << r.spec.id;
    EXPECT_EQ(e.transport().delivered_bytes(r.spec.id), r.spec.size_bytes) << "flow " << r.spec.id;
  }
}

TEST(Homa, ReceiverSrptCompletesMessagesInSizeOrder) {
  ExperimentConfig config = homa_star(6);
  const std::uint64_t sizes[] = {1'000'000, 3'000'000, 100'000, 300'000, 2'000'000};
  for (int s = 0; s < 5; ++s) add_flow(config, s + 1, 0, sizes[s]);
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  const std::vector<std::uint32_t> expected = {2, 3, 0, 4, 1};
  EXPECT_EQ(completion_order(e), expected);
}

TEST(Homa, SenderSrptCompletesItsMessagesInSizeOrder) {
  ExperimentConfig config = homa_star(5);
  // One sender, four receivers: the sender's uplink is the bottleneck.
  add_flow(config, 0, 1, 2'000'000);
  add_flow(config, 0, 2, 150'000);
  add_flow(config, 0, 3, 700'000);
  add_flow(config, 0, 4, 40'000);
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  const std::vector<std::uint32_t> expected = {3, 1, 2, 0};
  EXPECT_EQ(completion_order(e), expected);
  // The shortest one went first at line rate.
  EXPECT_LT(e.recorder().records()[3].slowdown(), 1.2);
}

TEST(Homa, NeverGrantsTwoMessagesOfOneSender) {
  ExperimentConfig config = homa_star(3);
  add_flow(config, 1, 0, 1'000'000);  // 0: A, sender 1, shortest
  add_flow(config, 1, 0, 2'000'000);  // 1: B, sender 1
  add_flow(config, 2, 0, 4'000'000);  // 2: C, sender 2, longest
  Experiment e(config);
  e.run_until(40 * kPsPerUs);
  const HomaTransport& h = homa(e);
  const std::uint64_t unsched = h.unsched_bytes();
  ASSERT_GT(h.receiver_granted_bytes(1), 0u) << "B's unscheduled bytes should have arrived";
  EXPECT_GT(h.receiver_granted_bytes(0), unsched) << "A is the best message: granted";
  EXPECT_EQ(h.receiver_granted_bytes(1), unsched) << "B shares A's sender: not granted";
  EXPECT_GT(h.receiver_granted_bytes(2), unsched) << "C ranks below B but is from another sender";
}

TEST(Homa, FifoGrantsKeepTheOldestMessageMoving) {
  auto delivered_at = [](double fifo_fraction) {
    ExperimentConfig config = homa_star(18);
    config.transport_params["grant_fifo_fraction"] = fifo_fraction;
    add_flow(config, 1, 0, 8'000'000);  // 0: oldest and longest
    // Sixteen shorter messages from other senders keep the active set full
    // (overcommitment 8) until the eighth of them completes, after ~650 us.
    for (int s = 2; s <= 17; ++s) add_flow(config, s, 0, 1'000'000, 2 * kPsPerUs);
    Experiment e(config);
    e.run_until(500 * kPsPerUs);
    return std::pair{e.transport().delivered_bytes(0), homa(e).fifo_grants()};
  };
  const auto [with_fifo, fifo_grants] = delivered_at(0.05);
  const auto [srpt_only, no_grants] = delivered_at(0.0);
  EXPECT_EQ(no_grants, 0u);
  EXPECT_GT(fifo_grants, 10u);
  // Under pure SRPT the long message gets little beyond its unscheduled bytes
  // (and what it was granted before the others arrived); FIFO grants give it
  // about 5% of the receiver link: ~300 KB in 500 us.
  EXPECT_LE(srpt_only, 3 * 61440u);
  EXPECT_GT(with_fifo, srpt_only + 200'000);
}

TEST(Homa, CountsGrantsAsSchedulingControlPerMessage) {
  ExperimentConfig config = homa_star(3);
  add_flow(config, 1, 0, 1'000'000);  // needs grants
  add_flow(config, 2, 0, 4096);       // entirely unscheduled
  Experiment e(config);
  e.run();
  ASSERT_TRUE(e.recorder().all_complete());
  const TransportStats s = e.transport().stats();
  const FlowCounters big = e.transport().flow_counters(0);
  const FlowCounters small = e.transport().flow_counters(1);
  // About one grant per scheduled data packet.
  EXPECT_GE(big.control_packets, (1'000'000u - homa(e).unsched_bytes()) / 4096 / 2);
  EXPECT_EQ(small.control_packets, 0u);
  EXPECT_EQ(big.data_packets, (1'000'000u + 4095) / 4096);
  EXPECT_EQ(s.scheduling_packets, big.control_packets + small.control_packets);
  EXPECT_EQ(s.control_packets, s.scheduling_packets + 2);  // plus one ACK per message
  EXPECT_EQ(s.control_bytes, s.control_packets * 78);
}

TEST(Homa, SameSeedGivesIdenticalFinishTimes) {
  auto run = [](std::uint64_t seed) {
    ExperimentConfig config = homa_star(9, 1500);
    config.seed = seed;
    config.network.link_loss_rate = 0.005;
    for (int i = 0; i < 24; ++i) {
      add_flow(config, 1 + i % 8, (i * 3) % 9 == 1 + i % 8 ? 0 : (i * 3) % 9,
               5'000 + 37'000 * static_cast<std::uint64_t>(i), i * 7 * kPsPerUs);
    }
    Experiment e(config);
    e.run();
    std::vector<TimePs> finish;
    for (const FlowRecord& r : e.recorder().records()) finish.push_back(r.finish_ps);
    finish.push_back(static_cast<TimePs>(e.transport().stats().retransmissions));
    return finish;
  };
  const std::vector<TimePs> a = run(3), b = run(3), c = run(4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c) << "the seed should matter (losses differ)";
}

}  // namespace
}  // namespace safs
