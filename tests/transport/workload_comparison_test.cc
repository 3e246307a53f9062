// Known behaviours of the baselines under standard workloads (the papers'
// headline claims, scaled to run in seconds).
#include <gtest/gtest.h>

#include <algorithm>

#include "experiment/experiment.h"
#include "metrics/summary.h"
#include "workload/poisson_flows.h"

namespace safs {
namespace {

// All-to-all Poisson traffic on a 32-host leaf-spine at 100 Gbit/s.
ExperimentConfig leaf_spine_workload(const char* transport, const char* cdf, double load,
                                     TimePs duration) {
  ExperimentConfig config;
  config.transport = transport;
  config.topology.kind = TopologyKind::kLeafSpine;
  config.topology.hosts_per_leaf = 8;
  config.topology.leaves = 4;
  config.topology.spines = 4;
  PoissonSpec traffic;
  traffic.cdf_path = std::string(SAFS_SOURCE_DIR) + "/data/cdf/" + cdf;
  traffic.load = load;
  traffic.stop_ps = duration;
  config.workloads.add(traffic);
  return config;
}

struct SizeClassStats {
  std::size_t flows = 0;
  double mean_slowdown = 0;
  double p99_slowdown = 0;
};

SizeClassStats slowdowns(const Experiment& e, std::uint64_t min_bytes, std::uint64_t max_bytes) {
  std::vector<double> s;
  for (const FlowRecord& r : e.recorder().records()) {
    if (r.spec.size_bytes < min_bytes || r.spec.size_bytes >= max_bytes) continue;
    EXPECT_TRUE(r.complete()) << "flow " << r.spec.id << " of " << r.spec.size_bytes << " B";
    if (r.complete()) s.push_back(r.slowdown());
  }
  SizeClassStats stats;
  stats.flows = s.size();
  if (s.empty()) return stats;
  double sum = 0;
  for (const double x : s) sum += x;
  stats.mean_slowdown = sum / static_cast<double>(s.size());
  stats.p99_slowdown = percentile(s, 99);
  return stats;
}

TEST(PfabricWorkload, ShortFlowsStayNearIdealAtSixtyPercentWebSearch) {
  Experiment e(leaf_spine_workload("pfabric", "websearch.csv", 0.6, 3 * kPsPerMs));
  e.run();
  ASSERT_TRUE(e.recorder().all_complete()) << "long flows must still finish";
  const SizeClassStats small = slowdowns(e, 0, 100'000);
  const SizeClassStats large = slowdowns(e, 1'000'000, UINT64_MAX);
  ASSERT_GT(small.flows, 200u);
  ASSERT_GT(large.flows, 50u);
  EXPECT_LT(small.mean_slowdown, 1.3);
  // And far better than DCTCP on the same arrivals.
  Experiment dctcp(leaf_spine_workload("dctcp", "websearch.csv", 0.6, 3 * kPsPerMs));
  dctcp.run();
  EXPECT_LT(small.mean_slowdown * 1.3, slowdowns(dctcp, 0, 100'000).mean_slowdown);
}

TEST(HomaWorkload, SmallMessagesBeatDctcpByAWideMarginOnW4AtHalfLoad) {
  Experiment homa(leaf_spine_workload("homa", "homa-w4.csv", 0.5, 2 * kPsPerMs));
  homa.run();
  Experiment dctcp(leaf_spine_workload("dctcp", "homa-w4.csv", 0.5, 2 * kPsPerMs));
  dctcp.run();
  ASSERT_TRUE(homa.recorder().all_complete());
  const SizeClassStats homa_small = slowdowns(homa, 0, 10'000);
  const SizeClassStats dctcp_small = slowdowns(dctcp, 0, 10'000);
  ASSERT_GT(homa_small.flows, 1000u);
  EXPECT_LT(homa_small.p99_slowdown, 1.5);
  EXPECT_LT(2.5 * homa_small.p99_slowdown, dctcp_small.p99_slowdown);
}

}  // namespace
}  // namespace safs
