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
      next_start_ps_(chains_.size()),
      launch_(std::move(launch)),
      start_order_(chains_.size()) {
  for (std::size_t i = 0; i < chains_.size(); ++i) next_start_ps_[i] = chains_[i].start_ps;
  std::iota(start_order_.begin(), start_order_.end(), 0);
  std::stable_sort(start_order_.begin(), start_order_.end(), [this](std::size_t a, std::size_t b) {
    return chains_[a].start_ps < chains_[b].start_ps;
  });
}

// One pending event for all chains, at the earliest start by the clock.
void BulkChains::arm() {
  TimePs next = kTimeNever;
  for (const TimePs at : next_start_ps_) next = std::min(next, at);
  if (next == kTimeNever || next >= armed_at_ps_) return;
  armed_at_ps_ = std::max(next, sim_.now());
  sim_.schedule_at(armed_at_ps_, this);
}

void BulkChains::handle_event(EventId /*id*/) {
  if (sim_.now() != armed_at_ps_) return;  // superseded by an earlier one
  armed_at_ps_ = kTimeNever;
  // In order of first start, so that chains due together launch (and take
  // flow ids) in a fixed order.
  for (const std::size_t chain : start_order_) {
    if (next_start_ps_[chain] <= sim_.now()) launch_next(chain);
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
  if (chains_[chain].period_ps == 0) launch_next(chain);
}

void BulkChains::launch_next(std::size_t chain) {
  const BulkSpec& spec = chains_[chain];
  next_start_ps_[chain] = kTimeNever;
  if (spec.count != 0 && launched_[chain] >= spec.count) return;
  ++launched_[chain];
  if (spec.period_ps > 0 && (spec.count == 0 || launched_[chain] < spec.count)) {
    next_start_ps_[chain] = spec.start_ps + static_cast<TimePs>(launched_[chain]) * spec.period_ps;
  }
  FlowSpec flow;
  flow.src = spec.src;
  flow.dst = spec.dst;
  flow.size_bytes = spec.size_bytes;
  flow.start_ps = sim_.now();
  flow.flow_class = spec.flow_class;
  chain_of_flow_[launch_(flow)] = chain;
}

}  // namespace safs
