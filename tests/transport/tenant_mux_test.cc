// Mixed tenants: urgent flows on the main transport, background flows on
// another one that shares the network (e.g. SAFS next to legacy Reno). Each
// flow runs on its tenant's transport only, the run's statistics are the
// two transports' sum, a shared sender NIC serves both tenants, and one
// transport alone never builds the mux.
#include <gtest/gtest.h>

#include <stdexcept>

#include "support/experiments.h"
#include "transport/common/tenant_mux.h"
#include "transport/safs/safs_transport.h"
#include "transport/window/window_transport.h"

namespace safs {
namespace {

FlowSpec flow(int src, int dst, std::uint64_t size_bytes, FlowClass c, TimePs deadline_ps) {
  FlowSpec f;
  f.src = src;
  f.dst = dst;
  f.size_bytes = size_bytes;
  f.flow_class = c;
  f.deadline_ps = deadline_ps;
  return f;
}

// Two urgent flows with deadlines and two background flows into host 0 and
// host 4 of a star; host 1 sends one flow of each tenant.
ExperimentConfig mixed(const char* main, const char* background) {
  ExperimentConfig config = testing::star(5);
  config.transport = main;
  config.background_transport = background;
  auto& flows = testing::listed_flows(config);
  flows.push_back(flow(1, 0, 2'000'000, FlowClass::kUrgent, kPsPerMs));
  flows.push_back(flow(2, 0, 2'000'000, FlowClass::kUrgent, kPsPerMs));
  flows.push_back(flow(3, 0, 8'000'000, FlowClass::kBackground, kTimeNever));
  flows.push_back(flow(1, 4, 8'000'000, FlowClass::kBackground, kTimeNever));
  return config;
}

const TenantMux& mux(const Experiment& e) {
  const auto* m = dynamic_cast<const TenantMux*>(&e.transport());
  if (m == nullptr) throw std::logic_error("the run built no tenant mux");
  return *m;
}

FlowClass other(FlowClass c) {
  return c == FlowClass::kUrgent ? FlowClass::kBackground : FlowClass::kUrgent;
}

TEST(TenantMux, EachFlowRunsOnItsTenantsTransport) {
  Experiment e(mixed("safs", "reno"));
  e.run();
  const TenantMux& m = mux(e);
  EXPECT_NE(dynamic_cast<const SafsTransport*>(&m.transport_of(FlowClass::kUrgent)), nullptr);
  const Transport& legacy = m.transport_of(FlowClass::kBackground);
  EXPECT_NE(dynamic_cast<const WindowTransport*>(&legacy), nullptr);
  EXPECT_EQ(dynamic_cast<const SafsTransport*>(&legacy), nullptr);

  for (const FlowRecord& r : e.recorder().records()) {
    const std::uint32_t id = r.spec.id;
    ASSERT_TRUE(r.complete()) << "flow " << id;
    const Transport& own = m.transport_of(r.spec.flow_class);
    EXPECT_EQ(own.delivered_bytes(id), r.spec.size_bytes) << "flow " << id;
    EXPECT_EQ(m.transport_of(other(r.spec.flow_class)).delivered_bytes(id), 0u) << "flow " << id;
    EXPECT_EQ(m.transport_of(other(r.spec.flow_class)).flow_counters(id).data_packets, 0u);
    EXPECT_EQ(r.data_packets, own.flow_counters(id).data_packets) << "flow " << id;
    // SAFS's grants and reports are scheduling control; Reno sends only ACKs.
    if (r.spec.flow_class == FlowClass::kUrgent) {
      EXPECT_GT(r.control_packets, 0u) << "flow " << id;
    } else {
      EXPECT_EQ(r.control_packets, 0u) << "flow " << id;
    }
  }
  EXPECT_GT(m.transport_of(FlowClass::kUrgent).stats().scheduling_packets, 0u);
  EXPECT_EQ(legacy.stats().scheduling_packets, 0u);
}

TEST(TenantMux, StatsAreBothTransportsSummed) {
  ExperimentConfig config = mixed("safs", "dctcp");
  config.network.link_loss_rate = 0.001;  // retransmissions and timeouts too
  Experiment e(config);
  e.run();
  const TenantMux& m = mux(e);
  const TransportStats a = m.transport_of(FlowClass::kUrgent).stats();
  const TransportStats b = m.transport_of(FlowClass::kBackground).stats();
  const TransportStats sum = e.transport().stats();
  EXPECT_GT(a.data_packets, 0u);
  EXPECT_GT(b.data_packets, 0u);
  EXPECT_GT(sum.retransmissions, 0u);
  EXPECT_EQ(sum.data_packets, a.data_packets + b.data_packets);
  EXPECT_EQ(sum.retransmissions, a.retransmissions + b.retransmissions);
  EXPECT_EQ(sum.timeouts, a.timeouts + b.timeouts);
  EXPECT_EQ(sum.control_packets, a.control_packets + b.control_packets);
  EXPECT_EQ(sum.control_bytes, a.control_bytes + b.control_bytes);
  EXPECT_EQ(sum.scheduling_packets, a.scheduling_packets + b.scheduling_packets);
  EXPECT_EQ(sum.duplicate_packets, a.duplicate_packets + b.duplicate_packets);
}

TEST(TenantMux, TenantsShareASenderNicInTurn) {
  // One long flow of each tenant from host 1, to different receivers: the
  // NIC is the only shared link. Were one tenant always asked first, its
  // open window would take nearly all of it.
  ExperimentConfig config = testing::star(4);
  config.transport = "dctcp";
  config.background_transport = "reno";
  auto& flows = testing::listed_flows(config);
  flows.push_back(flow(1, 2, 1'000'000'000, FlowClass::kUrgent, kTimeNever));
  flows.push_back(flow(1, 3, 1'000'000'000, FlowClass::kBackground, kTimeNever));
  Experiment e(config);
  e.run_until(2 * kPsPerMs);
  const auto urgent = static_cast<double>(e.transport().delivered_bytes(0));
  const auto background = static_cast<double>(e.transport().delivered_bytes(1));
  ASSERT_GT(urgent + background, 0.0);
  EXPECT_NEAR(urgent / (urgent + background), 0.5, 0.05) << urgent << " vs " << background;
}

TEST(TenantMux, MixedRunsAreDeterministic) {
  auto finishes = [] {
    Experiment e(mixed("safs", "reno"));
    e.run();
    std::vector<TimePs> at;
    for (const FlowRecord& r : e.recorder().records()) at.push_back(r.finish_ps);
    return at;
  };
  EXPECT_EQ(finishes(), finishes());
}

TEST(TenantMux, OneTransportBuildsNoMux) {
  auto finishes = [](const char* background) {
    Experiment e(mixed("safs", background));
    EXPECT_EQ(dynamic_cast<const TenantMux*>(&e.transport()), nullptr) << background;
    e.run();
    std::vector<TimePs> at;
    for (const FlowRecord& r : e.recorder().records()) at.push_back(r.finish_ps);
    return at;
  };
  EXPECT_EQ(finishes(""), finishes("safs"));
}

TEST(TenantMux, AnOwnSwitchQueueOnOneSideIsRefused) {
  for (const auto& [main, background] :
       {std::pair{"pfabric", "dctcp"}, std::pair{"dctcp", "pfabric"}}) {
    try {
      Experiment e(mixed(main, background));
      ADD_FAILURE() << main << " next to " << background << " was built";
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      EXPECT_NE(message.find("transport.background: pfabric needs its own switch queue"),
                std::string::npos)
          << message;
    }
  }
  EXPECT_NO_THROW(Experiment(mixed("pfabric", "pfabric")));
}

TEST(TenantMux, TheBackgroundSeedDiffersFromTheRuns) {
  EXPECT_NE(TenantMux::background_seed(1), 1u);
  EXPECT_NE(TenantMux::background_seed(1), TenantMux::background_seed(2));
}

}  // namespace
}  // namespace safs
