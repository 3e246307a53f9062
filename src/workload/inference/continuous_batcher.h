// Continuous batching over the attention instances: every micro-batch of
// every instance has a fixed number of request slots; a request joins at a
// step boundary (its prefill done, its KV cache in place) in the instance
// with the fewest requests, in its emptiest micro-batch (lowest index on a
// tie), and leaves after its last token.
#pragma once

#include <deque>
#include <vector>

#include "workload/inference/decode_step.h"
#include "workload/inference/requests.h"

namespace safs {

class ContinuousBatcher {
 public:
  ContinuousBatcher(int instances, int microbatches, int slots_per_microbatch);

  // Moves waiting requests (in arrival order) into free slots; each admitted
  // request gets its first token at `now`.
  void admit(std::deque<Request*>& waiting, TimePs now);
  // Every request of instance i's micro-batch j emitted one more token at `at`.
  void emit_tokens(int instance, int microbatch, TimePs at);
  // Drops finished requests and returns them.
  std::vector<Request*> retire_finished();

  std::vector<std::vector<MicrobatchLoad>> load() const;
  std::size_t active() const { return active_; }
  std::size_t capacity() const {
    return static_cast<std::size_t>(instances_) * static_cast<std::size_t>(microbatches_) *
           static_cast<std::size_t>(slots_);
  }

 private:
  int instances_, microbatches_, slots_;
  std::vector<std::vector<std::vector<Request*>>> members_;  // [instance][microbatch]
  std::vector<int> per_instance_;
  std::size_t active_ = 0;
};

}  // namespace safs
