#include "workload/inference/continuous_batcher.h"

#include <algorithm>

namespace safs {

ContinuousBatcher::ContinuousBatcher(int instances, int microbatches, int slots_per_microbatch)
    : instances_(instances),
      microbatches_(microbatches),
      slots_(slots_per_microbatch),
      members_(instances, std::vector<std::vector<Request*>>(microbatches)),
      per_instance_(instances, 0) {}

void ContinuousBatcher::admit(std::deque<Request*>& waiting, TimePs now) {
  while (!waiting.empty() && active_ < capacity()) {
    const int instance = static_cast<int>(
        std::min_element(per_instance_.begin(), per_instance_.end()) - per_instance_.begin());
    std::vector<std::vector<Request*>>& mbs = members_[instance];
    const int microbatch = static_cast<int>(
        std::min_element(mbs.begin(), mbs.end(),
                         [](const auto& a, const auto& b) { return a.size() < b.size(); }) -
        mbs.begin());
    Request* r = waiting.front();
    waiting.pop_front();
    r->instance = instance;
    r->microbatch = microbatch;
    r->first_token_ps = r->last_token_ps = now;
    r->tokens_done = 1;
    mbs[microbatch].push_back(r);
    ++per_instance_[instance];
    ++active_;
  }
}

void ContinuousBatcher::emit_tokens(int instance, int microbatch, TimePs at) {
  for (Request* r : members_[instance][microbatch]) {
    ++r->tokens_done;
    ++r->context_tokens;
    r->last_token_ps = at;
  }
}

std::vector<Request*> ContinuousBatcher::retire_finished() {
  std::vector<Request*> done;
  for (int i = 0; i < instances_; ++i) {
    for (std::vector<Request*>& mb : members_[i]) {
      const auto keep = std::stable_partition(mb.begin(), mb.end(),
                                              [](const Request* r) { return !r->finished(); });
      for (auto it = keep; it != mb.end(); ++it) done.push_back(*it);
      const int removed = static_cast<int>(mb.end() - keep);
      per_instance_[i] -= removed;
      active_ -= static_cast<std::size_t>(removed);
      mb.erase(keep, mb.end());
    }
  }
  return done;
}

std::vector<std::vector<MicrobatchLoad>> ContinuousBatcher::load() const {
  std::vector<std::vector<MicrobatchLoad>> result(instances_,
                                                  std::vector<MicrobatchLoad>(microbatches_));
  for (int i = 0; i < instances_; ++i) {
    for (int j = 0; j < microbatches_; ++j) {
      for (const Request* r : members_[i][j]) {
        ++result[i][j].tokens;
        result[i][j].context_tokens += r->context_tokens;
      }
    }
  }
  return result;
}

}  // namespace safs
