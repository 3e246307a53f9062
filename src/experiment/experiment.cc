#include "experiment/experiment.h"

#include <chrono>
#include <stdexcept>

#include "transport/registry.h"

namespace safs {

// Forwards completions to the recorder and the bulk chains, and stops the run
// once every listed flow is done (bulk chains never keep a run alive).
class Experiment::CompletionWatcher final : public FlowObserver {
 public:
  CompletionWatcher(Simulator& sim, FlowRecorder& recorder, std::size_t listed)
      : sim_(sim), recorder_(recorder), listed_left_(listed) {}
  void set_bulk(BulkChains* bulk) { bulk_ = bulk; }
  void on_flow_complete(const FlowSpec& flow, TimePs at) override {
    if (recorder_.records()[flow.id].complete()) return;
    recorder_.on_flow_complete(flow, at);
    if (bulk_ != nullptr) bulk_->on_flow_complete(flow);
    if (flow.id < listed_ && --listed_left_ == 0) sim_.stop();
  }
  bool done() const { return listed_ > 0 && listed_left_ == 0; }
  void set_listed(std::size_t n) { listed_ = listed_left_ = n; }

 private:
  Simulator& sim_;
  FlowRecorder& recorder_;
  std::size_t listed_ = 0;
  std::size_t listed_left_;
  BulkChains* bulk_ = nullptr;
};

Experiment::Experiment(ExperimentConfig config) : config_(std::move(config)) {
  config_.network.seed = config_.seed;
  network_ = build_network(config_.topology, sim_, pool_, config_.network);

  recorder_ = std::make_unique<FlowRecorder>();
  watcher_ = std::make_unique<CompletionWatcher>(sim_, *recorder_, 0);
  watcher_->set_listed(config_.flows.size());

  const TransportInfo* info = find_transport(config_.transport);
  if (info == nullptr) throw std::invalid_argument("unknown transport '" + config_.transport + "'");
  TransportParams params(&info->params);
  for (const auto& [key, value] : config_.transport_params) params.set(key, value);
  env_ = std::make_unique<TransportEnv>(TransportEnv{
      sim_, *network_, pool_, *watcher_, config_.mtu_bytes, config_.header_bytes, config_.seed});
  transport_ = info->make(*env_, params);

  // Ideal FCTs need routes, and routes need the receivers the transport attached.
  for (std::size_t i = 0; i < config_.flows.size(); ++i) {
    const FlowSpec& flow = config_.flows[i];
    if (flow.id != i) throw std::invalid_argument("flow ids must be 0..n-1 in order");
    const Route route = network_->route(flow.src, flow.dst, flow.id);
    recorder_->add(
        {flow, ideal_fct_ps(route, flow.size_bytes, config_.mtu_bytes, config_.header_bytes)});
  }
  schedule_ = std::make_unique<FlowSchedule>(sim_, *transport_, config_.flows);
  bulk_ = std::make_unique<BulkChains>(sim_, config_.bulk,
                                       static_cast<std::uint32_t>(config_.flows.size()),
                                       [this](const FlowSpec& flow) { launch(flow); });
  watcher_->set_bulk(bulk_.get());
}

void Experiment::launch(const FlowSpec& flow) {
  const Route route = network_->route(flow.src, flow.dst, flow.id);
  recorder_->add(
      {flow, ideal_fct_ps(route, flow.size_bytes, config_.mtu_bytes, config_.header_bytes)});
  transport_->start_flow(flow);
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
  }
  if (config_.flows.empty() && config_.bulk.empty()) return;
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
