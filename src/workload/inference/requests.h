// Decode requests: Poisson arrivals, each with an output length and a prompt
// (context) length drawn uniformly from a range. The stream is a pure
// function of the seed, so every transport sees the same requests.
#pragma once

#include <cstdint>

#include "base/time.h"
#include "engine/rng.h"

namespace safs {

struct RequestMix {
  double arrivals_per_s = 1000;
  std::uint32_t output_tokens_min = 16;
  std::uint32_t output_tokens_max = 48;
  std::uint32_t context_tokens_min = 1024;
  std::uint32_t context_tokens_max = 8192;

  double mean_output_tokens() const { return (output_tokens_min + output_tokens_max) / 2.0; }
  double mean_context_tokens() const { return (context_tokens_min + context_tokens_max) / 2.0; }
};

struct Request {
  std::uint32_t index = 0;  // arrival order
  TimePs arrival_ps = 0;
  std::uint32_t output_tokens = 0;
  std::uint64_t context_tokens = 0;  // grows by one per decode step
  int instance = -1;                 // attention instance once admitted
  int microbatch = -1;
  TimePs first_token_ps = -1;  // admission: prefill is done, its KV cache is in place
  TimePs last_token_ps = -1;
  std::uint32_t tokens_done = 0;  // the first token counts

  bool finished() const { return tokens_done >= output_tokens; }
  // Time per output token: (last - first) / (tokens - 1).
  double tpot_s() const;
};

class RequestStream {
 public:
  RequestStream(const RequestMix& mix, std::uint64_t seed);
  Request next();  // the next arrival

 private:
  RequestMix mix_;
  Rng rng_;
  TimePs clock_ps_ = 0;
  std::uint32_t count_ = 0;
};

}  // namespace safs
