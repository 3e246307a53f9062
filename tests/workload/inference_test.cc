// AFD decode serving: the step graph, continuous batching, and the
// compute-only bound that an infinitely fast network reproduces exactly.
#include <gtest/gtest.h>

#include "experiment/experiment.h"
#include "workload/inference/continuous_batcher.h"
#include "workload/inference/decode_step.h"
#include "workload/inference/inference_driver.h"
#include "workload/inference/inference_report.h"

namespace safs {
namespace {

AfdSpec small_spec(int attention, int ffn, int layers, int microbatches) {
  AfdSpec spec;
  for (int i = 0; i < attention; ++i) spec.attention_hosts.push_back(i);
  for (int k = 0; k < ffn; ++k) spec.ffn_hosts.push_back(attention + k);
  spec.layers = layers;
  spec.microbatches = microbatches;
  return spec;
}

TEST(DecodeStep, OpsTransfersAndSizes) {
  const AfdSpec spec = small_spec(3, 2, 2, 2);
  // Instance 1's micro-batch 1 is empty: no ops cost, no transfers, no sample.
  std::vector<std::vector<MicrobatchLoad>> load(3, std::vector<MicrobatchLoad>(2, {4, 4000}));
  load[1][1] = {0, 0};
  const DecodeStep step = build_decode_step(spec, load);
  const ComputeGraph& g = step.graph;
  g.validate();
  // Attention: 3 x 2 layers x 2 mb; FFN: 2 x 2 x 2; samples: 5 non-empty.
  EXPECT_EQ(g.ops.size(), 12u + 8u + 5u);
  EXPECT_EQ(step.sample_op[1][1], -1);
  // Per layer and mb: a dispatch and a combine per (non-empty A, F).
  EXPECT_EQ(g.transfers.size(), 2u * (2 * 3 + 2 * 2) * 2);
  for (const Transfer& t : g.transfers) {
    const bool dispatch = t.dst >= 3;
    EXPECT_EQ(t.size_bytes, 4u * 7168 * (dispatch ? 1 : 2));
  }
  // FFN(l, mb1) waits for the two non-empty dispatches; FFN(l, mb0) for three.
  for (const ComputeOp& op : g.ops) {
    if (op.label.rfind("FFN", 0) != 0) continue;
    EXPECT_EQ(op.inputs.size(), op.label.find("mb1") != std::string::npos ? 2u : 3u) << op.label;
    EXPECT_EQ(op.duration_ps, spec.compute.ffn_ps(4 * op.inputs.size()));
  }
  // Attention of layer 1 and the samples wait for one combine per FFN instance.
  for (const ComputeOp& op : g.ops) {
    const bool attention_l1 = op.label.rfind("Attn l1", 0) == 0 && op.duration_ps > 0;
    const bool sample = op.label.rfind("Sample", 0) == 0;
    const std::size_t expected_inputs = attention_l1 || sample ? 2u : 0u;
    if (attention_l1 || sample || op.label.rfind("Attn l0", 0) == 0) {
      EXPECT_EQ(op.inputs.size(), expected_inputs) << op.label;
    }
  }
}

TEST(ContinuousBatcher, FillsTheEmptiestInstanceAndRetiresFinished) {
  ContinuousBatcher batcher(2, 2, 1);  // 4 slots
  std::deque<Request> store(5);
  std::deque<Request*> waiting;
  for (std::uint32_t i = 0; i < 5; ++i) {
    store[i].index = i;
    store[i].output_tokens = i == 0 ? 2 : 3;
    waiting.push_back(&store[i]);
  }
  batcher.admit(waiting, 7);
  EXPECT_EQ(batcher.active(), 4u);
  ASSERT_EQ(waiting.size(), 1u);  // no slot left for the fifth
  EXPECT_EQ(store[0].instance, 0);
  EXPECT_EQ(store[1].instance, 1);  // the emptier instance
  EXPECT_EQ(store[2].microbatch, 1);
  EXPECT_EQ(store[0].first_token_ps, 7);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 2; ++j) batcher.emit_tokens(i, j, 100);
  }
  const std::vector<Request*> done = batcher.retire_finished();
  ASSERT_EQ(done.size(), 1u);  // request 0 had 2 tokens: prefill's and one decode step's
  EXPECT_EQ(done[0]->index, 0u);
  EXPECT_EQ(done[0]->tpot_s(), ps_to_sec(100 - 7));
  batcher.admit(waiting, 100);
  EXPECT_EQ(store[4].instance, 0);
  EXPECT_EQ(store[4].microbatch, 0);
}

// Ops of fixed length T and samples of length S, one attention and one FFN
// instance, three micro-batches, free communication. Attention never idles:
// Attn(l+1, j) needs FFN(l, j), which ends at 3lT + (j+2)T, when the
// attention instance finishes Attn(l, 2) at 3(l+1)T or later. So a step is
// 3LT for attention, then FFN of the last micro-batch (T), then its sample
// (S): 3LT + T + S when 2S <= T, and the samples of micro-batches 0, 1 and 2
// end at 3LT + S, 3LT + 2S and 3LT + T + S.
TEST(InferenceOnTheNetwork, FreeCommunicationGivesTheComputeOnlyTpotExactly) {
  const TimePs t = 100 * kPsPerUs, s = 10 * kPsPerUs;
  const int layers = 2;
  InferenceWorkload w;
  w.afd = small_spec(1, 1, layers, 3);
  w.afd.max_tokens_per_microbatch = 2;
  w.afd.compute = {t, 0, 0, t, 0, s};
  w.requests.output_tokens_min = w.requests.output_tokens_max = 4;
  w.batch_load = 0;
  w.requests.arrivals_per_s = 1e6;  // always a queue: every slot full at every step
  w.warmup_requests = 1;            // alone in the first step (the others arrive during it)
  w.measured_requests = 30;
  w.free_communication = true;
  ExperimentConfig config;
  config.topology.hosts = 2;
  config.workloads.add(w);
  Experiment e(config);
  e.run();
  const InferenceDriver& d = *e.find_workload<InferenceDriver>();
  ASSERT_TRUE(d.finished());
  const TimePs step = 3 * layers * t + t + s;
  ASSERT_GE(d.steps().size(), 10u);
  EXPECT_EQ(d.steps()[0].tokens, 1u);
  for (std::size_t i = 1; i < d.steps().size(); ++i) {
    const StepRecord& r = d.steps()[i];
    EXPECT_EQ(r.tokens, 6u);
    EXPECT_EQ(r.end_ps - r.start_ps, step);
    EXPECT_EQ(r.compute_only_ps, step);
    EXPECT_EQ(r.late_transfers, 0u);
  }
  const TimePs sample_end[3] = {3 * layers * t + s, 3 * layers * t + 2 * s, step};
  std::size_t checked = 0;
  for (const Request& r : d.requests()) {
    if (!d.measured(r) || !r.finished()) continue;
    // Three decode steps: two whole ones, then the third up to its sample.
    EXPECT_EQ(r.last_token_ps - r.first_token_ps, 2 * step + sample_end[r.microbatch]);
    ++checked;
  }
  EXPECT_EQ(checked, 30u);
  EXPECT_EQ(summarize_tpot(d).requests, 30u);
}

// The scaled-down 16A2F shape on a real network without background: every
// measured request completes, no step beats the compute-only bound, and the
// arrival rate follows batch_load.
TEST(InferenceOnTheNetwork, RealNetworkIsNeverFasterThanComputeOnly) {
  InferenceWorkload w;
  w.afd = small_spec(4, 2, 4, 3);
  w.requests.output_tokens_min = 4;
  w.requests.output_tokens_max = 8;
  w.warmup_requests = 10;
  w.measured_requests = 40;
  for (const char* transport : {"dctcp", "safs", "homa"}) {
    ExperimentConfig config;
    config.topology.hosts = 6;
    config.transport = transport;
    config.workloads.add(w);
    Experiment e(config);
    e.run();
    const InferenceDriver& d = *e.find_workload<InferenceDriver>();
    ASSERT_TRUE(d.finished()) << transport;
    EXPECT_NEAR(d.arrivals_per_s(), arrivals_per_s_for_load(w), 1e-9);
    for (const StepRecord& r : d.steps()) {
      EXPECT_GE(r.end_ps - r.start_ps, r.compute_only_ps) << transport;
      EXPECT_GT(r.transfers, 0u);
    }
    EXPECT_EQ(summarize_tpot(d).requests, 40u) << transport;
  }
}

}  // namespace
}  // namespace safs
