#include "workload/poisson_flows.h"

#include <numeric>
#include <stdexcept>

namespace safs {

namespace {
std::vector<int> or_all(const std::vector<int>& hosts, int num_hosts) {
  if (!hosts.empty()) return hosts;
  std::vector<int> all(num_hosts);
  std::iota(all.begin(), all.end(), 0);
  return all;
}
}  // namespace

std::unique_ptr<Workload> make_workload(const PoissonSpec& spec, WorkloadHost& host) {
  const RunShape& shape = host.shape();
  const FlowTerms terms{spec.measured, spec.deadline_factor};
  return std::make_unique<PoissonFlows>(
      host.sim(), spec, FlowSizeCdf::load(spec.cdf_path), shape.num_hosts,
      static_cast<double>(shape.host_link_bps), shape.mtu_bytes, shape.header_bytes, shape.seed,
      host.next_random_stream(), [&host, terms](const FlowSpec& flow) { host.launch(flow, terms); },
      [&host, terms] {
        if (terms.measured) host.workload_finished();
      });
}

std::string describe_workload(const PoissonSpec& spec) {
  return std::string(spec.measured ? "a measured" : "a background") + " Poisson generator";
}

PoissonFlows::PoissonFlows(Simulator& sim, const PoissonSpec& spec, FlowSizeCdf cdf, int num_hosts,
                           double link_bps, std::uint32_t mtu_bytes, std::uint32_t header_bytes,
                           std::uint64_t seed, std::uint64_t index, Launch launch,
                           std::function<void()> on_finished)
    : sim_(sim),
      spec_(spec),
      cdf_(std::move(cdf)),
      senders_(or_all(spec.senders, num_hosts)),
      receivers_(or_all(spec.receivers, num_hosts)),
      rng_(seed, "poisson-flows", index),
      launch_(std::move(launch)),
      on_finished_(std::move(on_finished)) {
  bool any_pair = false;
  for (const int s : senders_) {
    for (const int r : receivers_) any_pair = any_pair || s != r;
  }
  if (!any_pair)
    throw std::invalid_argument("poisson traffic needs a sender and a different receiver");
  const double mean_wire = cdf_.mean_bytes() * (1.0 + static_cast<double>(header_bytes) /
                                                          static_cast<double>(mtu_bytes));
  const double links = static_cast<double>(spec.per_receiver ? receivers_.size() : senders_.size());
  rate_per_s_ = spec.load * link_bps * links / (8.0 * mean_wire);
}

void PoissonFlows::arm() {
  if (rate_per_s_ <= 0) {
    finish();
    return;
  }
  next_ps_ = spec_.start_ps + static_cast<TimePs>(rng_.exponential(1.0 / rate_per_s_) * 1e12);
  if (next_ps_ > spec_.stop_ps) {
    finish();
  } else {
    sim_.schedule_at(next_ps_, this);
  }
}

void PoissonFlows::handle_event(EventId /*id*/) {
  FlowSpec flow;
  do {  // uniform over the (sender, receiver) pairs of different hosts
    flow.src = senders_[rng_.below(senders_.size())];
    flow.dst = receivers_[rng_.below(receivers_.size())];
  } while (flow.dst == flow.src);
  flow.size_bytes = cdf_.sample(rng_);
  flow.start_ps = sim_.now();
  flow.flow_class = spec_.flow_class;
  launch_(flow);
  ++launched_;
  next_ps_ += static_cast<TimePs>(rng_.exponential(1.0 / rate_per_s_) * 1e12);
  if ((spec_.max_flows != 0 && launched_ >= spec_.max_flows) || next_ps_ > spec_.stop_ps) {
    finish();
  } else {
    sim_.schedule_at(next_ps_, this);
  }
}

void PoissonFlows::finish() {
  if (finished_) return;
  finished_ = true;
  if (on_finished_) on_finished_();
}

}  // namespace safs
