// AFD decode serving as a workload: the instances and their compute model,
// the request stream, and the background traffic that shares their links
// (KV-cache transfers from prefill hosts into the attention hosts, bulk
// traffic into the FFN hosts).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "workload/inference/afd_spec.h"
#include "workload/inference/requests.h"
#include "workload/poisson_flows.h"

namespace safs {

struct InferenceWorkload {
  AfdSpec afd;
  RequestMix requests;
  // Arrival rate as a fraction of the token throughput of a full batch with
  // free communication; > 0 overrides requests.arrivals_per_s.
  double batch_load = 0.8;
  std::uint32_t warmup_requests = 300;     // arrive first, are not measured
  std::uint32_t measured_requests = 1000;  // the run lasts until these finish
  bool free_communication = false;         // an infinitely fast network

  std::vector<int> prefill_hosts;  // senders of KV-cache transfers
  double kv_load = 0.3;            // of each attention host's downlink
  std::string kv_cdf_path;
  std::vector<int> bulk_hosts;  // senders of background traffic into the FFN hosts
  double bulk_load = 0.3;       // of each FFN host's downlink
  std::string bulk_cdf_path;
};

// The decode-step time with every slot full at the mean context length and
// free communication: the compute-only step.
TimePs full_batch_step_ps(const InferenceWorkload& workload);
// Requests per second that keep `batch_load` of the slots busy at that step time.
double arrivals_per_s_for_load(const InferenceWorkload& workload);
// The same with the full-batch step already known.
double arrivals_per_s_for_load(const InferenceWorkload& workload, TimePs full_batch_step_ps);
// Open-loop background generators (unmeasured: they never keep a run alive).
std::vector<PoissonSpec> inference_background(const InferenceWorkload& workload);

}  // namespace safs
