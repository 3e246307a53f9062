#include "workload/bulk_chain.h"

#include <algorithm>
#include <numeric>

namespace safs {

std::unique_ptr<Workload> make_workload(const BulkTraffic& spec, WorkloadHost& host) {
  return std::make_unique<BulkChains>(host.sim(), spec.chains, [&host](const FlowSpec& flow) {
    return host.launch(flow, {.measured = false});
  });
}

std::string describe_workload(const BulkTraffic& spec) {
  return std::to_string(spec.chains.size()) + " bulk chains";
}

BulkChains::BulkChains(Simulator& sim, std::vector<BulkSpec> chains, Launch launch)
    : sim_(sim),
      chains_(std::move(chains)),
      launched_(chains_.size(), 0),
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

bool BulkChains::finished() const {
  if (!chain_of_flow_.empty()) return false;
  for (std::size_t i = 0; i < chains_.size(); ++i) {
    if (chains_[i].count == 0 || launched_[i] < chains_[i].count) return false;
  }
  return true;
}

void BulkChains::on_flow_complete(const FlowSpec& flow, TimePs /*at_ps*/) {
  const auto it = chain_of_flow_.find(flow.id);
  if (it == chain_of_flow_.end()) return;
  const std::size_t chain = it->second;
  chain_of_flow_.erase(it);
  launch_next(chain);
}

void BulkChains::launch_next(std::size_t chain) {
  const BulkSpec& spec = chains_[chain];
  if (spec.count != 0 && launched_[chain] >= spec.count) return;
  ++launched_[chain];
  FlowSpec flow;
  flow.src = spec.src;
  flow.dst = spec.dst;
  flow.size_bytes = spec.size_bytes;
  flow.start_ps = sim_.now();
  flow.flow_class = spec.flow_class;
  chain_of_flow_[launch_(flow)] = chain;
}

}  // namespace safs
