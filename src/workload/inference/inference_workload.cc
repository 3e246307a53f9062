#include "workload/inference/inference_workload.h"

#include <cmath>

#include "workload/inference/decode_step.h"

namespace safs {

TimePs full_batch_step_ps(const InferenceWorkload& workload) {
  const AfdSpec& afd = workload.afd;
  const auto slots = static_cast<std::uint64_t>(afd.max_tokens_per_microbatch);
  const MicrobatchLoad full{
      slots, static_cast<std::uint64_t>(std::llround(static_cast<double>(slots) *
                                                     workload.requests.mean_context_tokens()))};
  const DecodeStep step = build_decode_step(
      afd, std::vector<std::vector<MicrobatchLoad>>(
               afd.attention_instances(), std::vector<MicrobatchLoad>(afd.microbatches, full)));
  return makespan_ps(step.graph, planned_starts(step.graph));
}

double arrivals_per_s_for_load(const InferenceWorkload& workload) {
  return arrivals_per_s_for_load(workload, full_batch_step_ps(workload));
}

double arrivals_per_s_for_load(const InferenceWorkload& workload, TimePs full_batch_step_ps) {
  const AfdSpec& afd = workload.afd;
  const double slots = static_cast<double>(afd.attention_instances()) * afd.microbatches *
                       afd.max_tokens_per_microbatch;
  // A request holds its slot for (output tokens - 1) decode steps.
  const double steps_per_request = workload.requests.mean_output_tokens() - 1;
  return workload.batch_load * slots / (steps_per_request * ps_to_sec(full_batch_step_ps));
}

std::vector<PoissonSpec> inference_background(const InferenceWorkload& workload) {
  std::vector<PoissonSpec> specs;
  auto add = [&](const std::vector<int>& senders, const std::vector<int>& receivers, double load,
                 const std::string& cdf) {
    if (senders.empty() || load <= 0) return;
    PoissonSpec spec;
    spec.cdf_path = cdf;
    spec.load = load;
    spec.per_receiver = true;
    spec.senders = senders;
    spec.receivers = receivers;
    spec.measured = false;
    specs.push_back(spec);
  };
  add(workload.prefill_hosts, workload.afd.attention_hosts, workload.kv_load, workload.kv_cdf_path);
  add(workload.bulk_hosts, workload.afd.ffn_hosts, workload.bulk_load, workload.bulk_cdf_path);
  return specs;
}

}  // namespace safs
