// Flows whose two ends are done but whose state something may still reach:
// a packet on one of its routes, a queued timer event, a host queue. A
// transport adds a flow here when both ends have finished and frees its
// state once nothing refers to it any more, so a run holds the state of the
// flows that are live, not of every flow it has seen. Freeing never changes
// what the simulation does: only a flow that nothing can reach is freed.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace safs {

class RetiringFlows {
 public:
  // Flow `id` waits; then every waiting flow that `unreachable(id)` says
  // nothing refers to is freed (`release(id)`). It looks only once the list
  // has doubled since it last looked, so the cost per flow stays constant
  // however long flows wait.
  template <class Unreachable, class Release>
  void add(std::uint32_t id, Unreachable unreachable, Release release) {
    ids_.push_back(id);
    if (ids_.size() < next_sweep_) return;
    std::erase_if(ids_, [&](std::uint32_t waiting_id) {
      if (!unreachable(waiting_id)) return false;
      release(waiting_id);
      return true;
    });
    next_sweep_ = std::max(kMinSweep, 2 * ids_.size());
  }

  std::size_t waiting() const { return ids_.size(); }

 private:
  // Below this many waiting flows a sweep is not worth its pass.
  static constexpr std::size_t kMinSweep = 64;
  std::vector<std::uint32_t> ids_;
  std::size_t next_sweep_ = kMinSweep;
};

}  // namespace safs
