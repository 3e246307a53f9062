// The numbers docs/workloads.md quotes for AFD inference, from the code's
// defaults and the 16A2F shape of scenarios/paper/afd-16a2f.toml.
#include <gtest/gtest.h>

#include "scenario/scenario.h"
#include "workload/inference/decode_step.h"
#include "workload/inference/inference_workload.h"
#include "workload/poisson_flows.h"

namespace safs {
namespace {

AfdSpec afd_16a2f() {
  AfdSpec afd;  // defaults: 61 layers, 3 micro-batches, hidden 7168, 8 slots
  for (int i = 0; i < 16; ++i) afd.attention_hosts.push_back(i);
  afd.ffn_hosts = {16, 17};
  return afd;
}

TEST(WorkloadDocNumbers, AfdDefaultsAndOpTimesAtFullBatch) {
  const AfdSpec afd = afd_16a2f();
  EXPECT_EQ(afd.layers, 61);
  EXPECT_EQ(afd.microbatches, 3);
  EXPECT_EQ(afd.hidden, 7168u);
  EXPECT_EQ(afd.max_tokens_per_microbatch, 8);
  const RequestMix mix;
  EXPECT_EQ(mix.mean_context_tokens(), 4608);
  // Attention: 20 us + 8 x 20 us + 8 x 4608 x 1 ns.
  EXPECT_EQ(afd.compute.attention_ps(8, 8 * 4608), 216'864 * kPsPerNs);
  // FFN: 20 us + (16 x 8 tokens) x 1.56 us.
  EXPECT_EQ(afd.compute.ffn_ps(16 * afd.routed_tokens(8)), 219'680 * kPsPerNs);
}

TEST(WorkloadDocNumbers, AfdMicroBatchCommunication) {
  const AfdSpec afd = afd_16a2f();
  std::vector<std::vector<MicrobatchLoad>> full(16, std::vector<MicrobatchLoad>(3, {8, 8 * 4608}));
  const ComputeGraph graph = build_decode_step(afd, full).graph;
  // Bytes into one FFN host per micro-batch and layer (dispatch), out of it (combine).
  std::uint64_t dispatch_in = 0, combine_out = 0;
  for (const Transfer& t : graph.transfers) {
    if (graph.ops[t.consumer].label == "FFN l0 mb0 f0") dispatch_in += t.size_bytes;
    if (graph.ops[t.producer].label == "FFN l0 mb0 f0") combine_out += t.size_bytes;
  }
  EXPECT_EQ(dispatch_in, 917'504u);    // 16 x 8 x 7168 x 1 B
  EXPECT_EQ(combine_out, 1'835'008u);  // 16 x 8 x 7168 x 2 B
  EXPECT_EQ(serialization_ps(dispatch_in, 100'000'000'000) / kPsPerNs, 73'400);
  EXPECT_EQ(serialization_ps(combine_out, 100'000'000'000) / kPsPerNs, 146'800);
}

TEST(WorkloadDocNumbers, ComputeOnlyStepAndArrivalRate) {
  InferenceWorkload w;
  w.afd = afd_16a2f();
  w.requests.output_tokens_min = 4;  // scenarios/paper/afd-16a2f.toml
  w.requests.output_tokens_max = 12;
  w.batch_load = 0.9;
  // 61 layers with the FFN hosts busy back to back (3 x 219.68 us each), plus
  // the first attention op and the last sample.
  EXPECT_EQ(full_batch_step_ps(w), 40'438'304 * kPsPerNs);
  // 90% of 16 x 3 x 8 slots, each held for 7 steps on average.
  EXPECT_NEAR(arrivals_per_s_for_load(w), 0.9 * 384 / (7 * 0.040438304), 1e-6);
}

TEST(WorkloadDocNumbers, TheShippedAfdScenarioIsTheOneDescribed) {
  const ExperimentConfig config =
      load_scenario(std::string(SAFS_SOURCE_DIR) + "/scenarios/paper/afd-16a2f.toml");
  ASSERT_NE(config.workloads.find<InferenceWorkload>(), nullptr);
  const InferenceWorkload& w = *config.workloads.find<InferenceWorkload>();
  EXPECT_EQ(config.topology.hosts, 28);
  EXPECT_EQ(config.topology.host_link.rate_bps, 100'000'000'000u);
  EXPECT_EQ(w.afd.attention_instances(), 16);
  EXPECT_EQ(w.afd.ffn_instances(), 2);
  EXPECT_EQ(w.afd.layers, 61);
  EXPECT_EQ(w.afd.microbatches, 3);
  EXPECT_EQ(w.afd.hidden, 7168u);
  EXPECT_EQ(w.afd.max_tokens_per_microbatch, 8);
  EXPECT_EQ(w.afd.routing_fraction, 1.0);
  EXPECT_EQ(w.requests.output_tokens_min, 4u);
  EXPECT_EQ(w.requests.output_tokens_max, 12u);
  EXPECT_EQ(w.requests.mean_context_tokens(), 4608);
  EXPECT_EQ(w.batch_load, 0.9);
  EXPECT_EQ(w.prefill_hosts.size(), 8u);
  EXPECT_EQ(w.warmup_requests, 300u);
  EXPECT_EQ(w.bulk_hosts.size(), 2u);
  EXPECT_EQ(w.kv_load, 0.3);
  EXPECT_EQ(w.bulk_load, 0.3);
  EXPECT_EQ(config.workloads.count<PoissonSpec>(), 2u);  // KV caches into A, web search into F
}

}  // namespace
}  // namespace safs
