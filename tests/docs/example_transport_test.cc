// The example transport of docs/adding-a-transport.md, wired by hand the way
// Experiment wires a registered one.
#include <gtest/gtest.h>

#include "docs/example_transport.h"
#include "net/topology.h"

namespace safs {
namespace {

class CompletionLog final : public FlowObserver {
 public:
  void on_flow_complete(const FlowSpec& flow, TimePs at) override {
    finish_ps.resize(std::max<std::size_t>(finish_ps.size(), flow.id + 1), -1);
    finish_ps[flow.id] = at;
  }
  std::vector<TimePs> finish_ps;  // by flow id; -1: not done
};

// [snippet:wiring]
// What Experiment does with a registry entry: build the network, give the
// transport its environment, start flows at their start times, run.
struct PacedRun {
  explicit PacedRun(double rate_gbps, int hosts = 2) {
    TopologySpec topology;  // a star: every host on one switch, 100 Gbit/s links
    topology.hosts = hosts;
    net = build_network(topology, sim, pool, NetworkConfig{});
    env = std::make_unique<TransportEnv>(TransportEnv{sim, *net, pool, log, 4096, 78, 1});
    // The scenario's [transport.paced] table, here as a map.
    setup = info.configure(MapReader("transport.paced", {{"rate_gbps", rate_gbps}}));
    transport = setup->make(*env);
  }
  void start(std::uint32_t id, int src, int dst, std::uint64_t size_bytes) {
    FlowSpec flow;
    flow.id = id;
    flow.src = src;
    flow.dst = dst;
    flow.size_bytes = size_bytes;
    transport->start_flow(flow);  // start_ps = 0 = now
  }

  const TransportInfo info = example::paced_transport_info();
  Simulator sim;
  PacketPool pool;
  std::unique_ptr<Network> net;
  CompletionLog log;
  std::unique_ptr<TransportEnv> env;
  std::unique_ptr<TransportSetup> setup;
  std::unique_ptr<Transport> transport;
};
// [end-snippet]

TEST(ExampleTransport, RegistryEntryIsWellFormed) {
  const TransportInfo info = example::paced_transport_info();
  EXPECT_EQ(info.name, "paced");
  ASSERT_TRUE(info.configure);
  for (const KeySpec& k : info.keys) {
    const double value = std::holds_alternative<double>(k.default_value)
                             ? std::get<double>(k.default_value)
                             : static_cast<double>(std::get<std::int64_t>(k.default_value));
    EXPECT_GE(value, k.min_value) << k.path;
    EXPECT_LE(value, k.max_value) << k.path;
    EXPECT_FALSE(k.doc.empty()) << k.path;
  }
  // An empty section gives the default-constructed options.
  const example::PacedOptions defaults = example::paced_knobs().read(MapReader("paced", {}));
  EXPECT_EQ(defaults.rate_bps, example::PacedOptions{}.rate_bps);
  EXPECT_FALSE(info.configure(MapReader("paced", {}))->queue_factory());  // strict priority
}

TEST(ExampleTransport, EcnHalvingControlHalvesDownToTwoPackets) {
  const example::EcnHalvingControl control(2 * 4096);
  CcState cc;
  cc.cwnd_bytes = 100'000;
  const FlowProgress progress{1'000'000, kTimeNever, 0, kPsPerUs};
  EXPECT_TRUE(control.ecn_capable());
  EXPECT_EQ(control.cwnd_after_echo(cc, progress), 50'000u);
  cc.cwnd_bytes = 10'000;
  EXPECT_EQ(control.cwnd_after_echo(cc, progress), 2u * 4096);
}

TEST(ExampleTransport, OneFlowCompletesAtItsPacedRate) {
  PacedRun run(10);
  const std::uint64_t size = 1'000'000;
  run.start(0, 1, 0, size);
  run.sim.run_until(10 * kPsPerMs);

  ASSERT_EQ(run.log.finish_ps.size(), 1u);
  ASSERT_GE(run.log.finish_ps[0], 0) << "the flow did not complete";
  EXPECT_EQ(run.transport->delivered_bytes(0), size);
  const std::uint64_t packets = (size + 4095) / 4096;
  EXPECT_EQ(run.transport->stats().data_packets, packets);  // no loss, no retransmission
  // Every wire byte at 10 Gbit/s, plus a few microseconds of path latency.
  const TimePs paced = serialization_ps(size + packets * 78, 10'000'000'000);
  EXPECT_GE(run.log.finish_ps[0], paced - 2 * kPsPerUs);
  EXPECT_LE(run.log.finish_ps[0], paced + 10 * kPsPerUs);
}

TEST(ExampleTransport, IncastAboveTheLinkRateIsMarkedAndStillDeliversExactlyOnce) {
  PacedRun run(80, 3);  // two senders at 80 Gbit/s into one 100 Gbit/s link
  const std::uint64_t size = 20'000'000;
  run.start(0, 1, 0, size);
  run.start(1, 2, 0, size);
  run.sim.run_until(100 * kPsPerMs);

  ASSERT_EQ(run.log.finish_ps.size(), 2u);
  EXPECT_GE(run.log.finish_ps[0], 0);
  EXPECT_GE(run.log.finish_ps[1], 0);
  EXPECT_EQ(run.transport->delivered_bytes(0), size);
  EXPECT_EQ(run.transport->delivered_bytes(1), size);
  std::uint64_t marks = 0;
  for (const auto& port : run.net->ports()) marks += port->ecn_marks();
  EXPECT_GT(marks, 0u);  // the switch marked, so the halving control acted
  // Both together cannot beat the shared 100 Gbit/s link.
  const TimePs last = std::max(run.log.finish_ps[0], run.log.finish_ps[1]);
  EXPECT_GE(last, serialization_ps(2 * size, 100'000'000'000));
}

}  // namespace
}  // namespace safs
