#include "workload/inference/requests.h"

namespace safs {

double Request::tpot_s() const {
  if (output_tokens < 2 || last_token_ps < 0) return 0;
  return ps_to_sec(last_token_ps - first_token_ps) / static_cast<double>(output_tokens - 1);
}

RequestStream::RequestStream(const RequestMix& mix, std::uint64_t seed)
    : mix_(mix), rng_(seed, "inference.requests") {}

Request RequestStream::next() {
  clock_ps_ += sec_to_ps(rng_.exponential(1.0 / mix_.arrivals_per_s));
  Request r;
  r.index = count_++;
  r.arrival_ps = clock_ps_;
  r.output_tokens =
      mix_.output_tokens_min +
      static_cast<std::uint32_t>(rng_.below(mix_.output_tokens_max - mix_.output_tokens_min + 1));
  r.context_tokens =
      mix_.context_tokens_min + rng_.below(mix_.context_tokens_max - mix_.context_tokens_min + 1);
  return r;
}

}  // namespace safs
