#include "experiment/experiment.h"

#include <chrono>
#include <functional>
#include <stdexcept>

#include "transport/registry.h"

namespace safs {

// Forwards completions to the recorder and the bulk chains, and stops the run
// once every measured flow is done: the listed ones and those of measured
// generators, after the generators have stopped. Bulk chains and unmeasured
// generators never keep a run alive.
class Experiment::CompletionWatcher final : public FlowObserver {
 public:
  CompletionWatcher(Simulator& sim, FlowRecorder& recorder) : sim_(sim), recorder_(recorder) {}
  void set_bulk(BulkChains* bulk) { bulk_ = bulk; }
  // A computation that waits for some flows (it ignores ids not its own).
  void add_flow_listener(std::function<void(std::uint32_t)> listener) {
    listeners_.push_back(std::move(listener));
  }
  void expect_flow(std::uint32_t id) {
    if (measured_.size() <= id) measured_.resize(id + 1, false);
    measured_[id] = true;
    ++outstanding_;
    anything_measured_ = true;
  }
  void expect_generator() {
    ++generators_;
    anything_measured_ = true;
  }
  void generator_finished() {
    --generators_;
    stop_if_done();
  }
  void on_flow_complete(const FlowSpec& flow, TimePs at) override {
    if (recorder_.records()[flow.id].complete()) return;
    recorder_.on_flow_complete(flow, at);
    if (bulk_ != nullptr) bulk_->on_flow_complete(flow);
    for (const auto& listener : listeners_) listener(flow.id);
    if (flow.id < measured_.size() && measured_[flow.id]) {
      --outstanding_;
      stop_if_done();
    }
  }
  bool done() const { return anything_measured_ && outstanding_ == 0 && generators_ == 0; }

 private:
  void stop_if_done() {
    if (done()) sim_.stop();
  }

  Simulator& sim_;
  FlowRecorder& recorder_;
  BulkChains* bulk_ = nullptr;
  std::vector<std::function<void(std::uint32_t)>> listeners_;
  std::vector<bool> measured_;
  std::size_t outstanding_ = 0;
  std::size_t generators_ = 0;
  bool anything_measured_ = false;
};

Experiment::Experiment(ExperimentConfig config) : config_(std::move(config)) {
  const TransportInfo* info = find_transport(config_.transport);
  if (info == nullptr) throw std::invalid_argument("unknown transport '" + config_.transport + "'");
  transport_setup_ =
      info->configure(MapReader("transport." + config_.transport, config_.transport_params));

  config_.network.seed = config_.seed;
  if (QueueFactory queues = transport_setup_->queue_factory()) {
    config_.network.queue_factory = std::move(queues);
  }
  network_ = build_network(config_.topology, sim_, pool_, config_.network);

  recorder_ = std::make_unique<FlowRecorder>();
  watcher_ = std::make_unique<CompletionWatcher>(sim_, *recorder_);

  env_ = std::make_unique<TransportEnv>(TransportEnv{sim_, *network_, pool_, *watcher_,
                                                     config_.mtu_bytes, config_.header_bytes,
                                                     config_.seed, &grant_observer_});
  transport_ = transport_setup_->make(*env_);

  // Ideal FCTs need routes, and routes need the receivers the transport attached.
  for (std::size_t i = 0; i < config_.flows.size(); ++i) {
    const FlowSpec& flow = config_.flows[i];
    if (flow.id != i) throw std::invalid_argument("flow ids must be 0..n-1 in order");
    recorder_->add({flow, ideal_fct(flow)});
    watcher_->expect_flow(flow.id);
  }
  schedule_ = std::make_unique<FlowSchedule>(sim_, *transport_, config_.flows);
  bulk_ = std::make_unique<BulkChains>(
      sim_, config_.bulk, [this](const FlowSpec& flow) { return launch(flow, false, 0); });
  watcher_->set_bulk(bulk_.get());
  if (config_.compute) {
    watcher_->expect_generator();  // the run lasts until the last op ends
    compute_ = std::make_unique<ComputeEngine>(sim_, *config_.compute, compute_hooks());
    watcher_->add_flow_listener(
        [c = compute_.get()](std::uint32_t id) { c->on_flow_complete(id); });
  }
  if (config_.inference) {
    watcher_->expect_generator();  // the run lasts until the measured requests finish
    ComputeHooks hooks = compute_hooks();
    if (config_.inference->free_communication) hooks.launch = nullptr;
    inference_ =
        std::make_unique<InferenceDriver>(sim_, *config_.inference, config_.seed, std::move(hooks));
    watcher_->add_flow_listener(
        [d = inference_.get()](std::uint32_t id) { d->on_flow_complete(id); });
  }
  const double host_link_bps = static_cast<double>(config_.topology.host_link.rate_bps);
  for (std::size_t i = 0; i < config_.poisson.size(); ++i) {
    const PoissonSpec& spec = config_.poisson[i];
    if (spec.measured) watcher_->expect_generator();
    poisson_.push_back(std::make_unique<PoissonFlows>(
        sim_, spec, FlowSizeCdf::load(spec.cdf_path), network_->num_hosts(), host_link_bps,
        config_.mtu_bytes, config_.header_bytes, config_.seed, i,
        [this, spec](const FlowSpec& flow) { launch(flow, spec.measured, spec.deadline_factor); },
        [this, measured = spec.measured] {
          if (measured) watcher_->generator_finished();
        }));
  }
}

ComputeHooks Experiment::compute_hooks() {
  ComputeHooks hooks;
  hooks.launch = [this](const FlowSpec& flow) { return launch(flow, true, 0); };
  hooks.update_deadline = [this](std::uint32_t id, TimePs deadline) {
    recorder_->record(id).spec.deadline_ps = deadline;
    transport_->update_deadline(id, deadline);
  };
  hooks.on_finished = [this] { watcher_->generator_finished(); };
  return hooks;
}

std::uint32_t Experiment::launch(FlowSpec flow, bool measured, double deadline_factor) {
  flow.id = static_cast<std::uint32_t>(recorder_->records().size());
  const TimePs ideal = ideal_fct(flow);
  if (deadline_factor > 0) {
    flow.deadline_ps =
        flow.start_ps + static_cast<TimePs>(deadline_factor * static_cast<double>(ideal));
  }
  recorder_->add({flow, ideal});
  if (measured) watcher_->expect_flow(flow.id);
  transport_->start_flow(flow);
  return flow.id;
}

TimePs Experiment::ideal_fct(const FlowSpec& flow) const {
  const Route route = network_->route(flow.src, flow.dst, flow.id);
  const PathSummary path{route.bottleneck_bps(), route.propagation_ps,
                         std::span(route.rate_bps).subspan(route.links() > 0 ? 1 : 0)};
  return ideal_fct_ps(path, flow.size_bytes, config_.mtu_bytes, config_.header_bytes);
}

void Experiment::finalize_records() {
  for (const FlowRecord& r : recorder_->records()) {
    FlowRecord& record = recorder_->record(r.spec.id);
    record.delivered_bytes = transport_->delivered_bytes(r.spec.id);
    const FlowCounters counters = transport_->flow_counters(r.spec.id);
    record.data_packets = counters.data_packets;
    record.control_packets = counters.control_packets;
  }
}

Experiment::~Experiment() = default;

void Experiment::run_until(TimePs t) {
  if (!started_) {
    started_ = true;
    schedule_->arm();
    bulk_->arm();
    for (auto& generator : poisson_) generator->arm();
    if (compute_) compute_->start();
    if (inference_) inference_->start();
  }
  if (config_.flows.empty() && config_.bulk.empty() && config_.poisson.empty() &&
      !config_.compute && !config_.inference) {
    return;
  }
  if (!watcher_->done()) sim_.run_until(t);
  network_->settle_stats();
  finalize_records();
}

double Experiment::run() {
  const auto wall_start = std::chrono::steady_clock::now();
  run_until(config_.stop_ps);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
}

NetworkTotals Experiment::network_totals() const {
  NetworkTotals totals;
  const auto& ports = network_->ports();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const PortStats& stats = ports[i]->stats();
    totals.packet_hops += stats.packets_sent;
    totals.queue_drops += stats.drops;
    totals.wire_losses += ports[i]->wire().losses();
    totals.ecn_marks += ports[i]->ecn_marks();
    if (!network_->port_at_host(i)) {
      totals.max_switch_queue_bytes =
          std::max(totals.max_switch_queue_bytes, stats.max_queue_bytes);
    }
  }
  return totals;
}

}  // namespace safs
