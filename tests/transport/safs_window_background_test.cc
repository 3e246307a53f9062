// grant_background = false: SAFS grants only its urgent flows and leaves
// background to the window underneath at the lowest priority, as it would
// unmanaged traffic. The claims of docs/safs.md ("Background under its
// window") as tests that can fail.
#include <gtest/gtest.h>

#include "metrics/summary.h"
#include "support/experiments.h"
#include "workload/incast_micro.h"

namespace safs {
namespace {

struct ClassControl {
  std::uint64_t urgent_control = 0;
  std::uint64_t background_control = 0;
  FlowSummary urgent;
  FlowSummary background;
};

// The receiver-incast microbenchmark (four 64 MB urgent flows beside bulk
// background into one receiver), as tests/transport/safs_test.cc runs it.
ClassControl run_incast(bool grant_background) {
  const IncastMicro m = make_incast_micro({4, 64ull << 20, 1.0});
  ExperimentConfig config = testing::star(m.hosts);
  config.transport = "safs";
  config.transport_params["grant_background"] = grant_background;
  config.workloads.add(ListedFlows{m.flows});
  config.workloads.add(BulkTraffic{m.bulk});
  Experiment e(config);
  e.run();
  ClassControl out;
  for (const FlowRecord& r : e.recorder().records()) {
    (r.spec.flow_class == FlowClass::kUrgent ? out.urgent_control : out.background_control) +=
        r.control_packets;
  }
  const FlowClass urgent = FlowClass::kUrgent;
  const FlowClass background = FlowClass::kBackground;
  out.urgent = summarize(e.recorder().records(), e.sim().now(), &urgent);
  out.background = summarize(e.recorder().records(), e.sim().now(), &background);
  return out;
}

// Ungranted, the background costs no control at all, and strict priority
// keeps the urgent flows' grants whole: every one is still on time. The
// background still gets the rest of the link.
TEST(SafsWindowBackground, BackgroundCostsNoControlAndUrgentFlowsStayOnTime) {
  const ClassControl granted = run_incast(true);
  const ClassControl window = run_incast(false);
  EXPECT_GT(granted.background_control, 0u);  // the control there is to save
  EXPECT_EQ(window.background_control, 0u);
  EXPECT_GT(window.urgent_control, 0u);  // urgent flows are still granted
  ASSERT_EQ(window.urgent.completed, 4u);
  EXPECT_EQ(window.urgent.met_deadline, 4u);
  EXPECT_GT(window.background.delivered_gbps, 5.0);
}

}  // namespace
}  // namespace safs
