#include "workload/bulk_chain.h"

#include <algorithm>
#include <numeric>

namespace safs {

BulkChains::BulkChains(Simulator& sim, std::vector<BulkSpec> chains, std::uint32_t first_id,
                       Launch launch)
    : sim_(sim),
      chains_(std::move(chains)),
      launched_(chains_.size(), 0),
      first_id_(first_id),
      next_id_(first_id),
      launch_(std::move(launch)),
      start_order_(chains_.size()) {
  std::iota(start_order_.begin(), start_order_.end(), 0);
  std::stable_sort(start_order_.begin(), start_order_.end(), [this](std::size_t a, std::size_t b) {
    return chains_[a].start_ps < chains_[b].start_ps;
  });
}

void BulkChains::arm() {
  if (next_start_ < start_order_.size()) {
    sim_.schedule_at(chains_[start_order_[next_start_]].start_ps, this);
  }
}

void BulkChains::handle_event(EventId /*id*/) {
  while (next_start_ < start_order_.size() &&
         chains_[start_order_[next_start_]].start_ps <= sim_.now()) {
    launch_next(start_order_[next_start_++]);
  }
  arm();
}

void BulkChains::on_flow_complete(const FlowSpec& flow) {
  if (flow.id < first_id_ || flow.id - first_id_ >= chain_of_flow_.size()) return;
  launch_next(static_cast<std::size_t>(chain_of_flow_[flow.id - first_id_]));
}

void BulkChains::launch_next(std::size_t chain) {
  const BulkSpec& spec = chains_[chain];
  if (spec.count != 0 && launched_[chain] >= spec.count) return;
  ++launched_[chain];
  FlowSpec flow;
  flow.id = next_id_++;
  flow.src = spec.src;
  flow.dst = spec.dst;
  flow.size_bytes = spec.size_bytes;
  flow.start_ps = sim_.now();
  flow.flow_class = spec.flow_class;
  chain_of_flow_.push_back(static_cast<std::int64_t>(chain));
  launch_(flow);
}

}  // namespace safs
