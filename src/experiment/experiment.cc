#include "experiment/experiment.h"

#include <chrono>
#include <stdexcept>
#include <string>

#include "base/input_error.h"
#include "experiment/consumer_waits.h"
#include "experiment/timestamp_errors.h"
#include "transport/common/tenant_mux.h"
#include "transport/registry.h"

namespace safs {

// Forwards completions to the recorder and to every workload, and stops the
// run once nothing measured is left: every flow registered as measured has
// completed and every measured workload has finished. Background (bulk
// chains, unmeasured generators) never keeps a run alive.
class Experiment::CompletionWatcher final : public FlowObserver {
 public:
  CompletionWatcher(Simulator& sim, FlowRecorder& recorder,
                    const std::vector<std::unique_ptr<Workload>>& workloads)
      : sim_(sim), recorder_(recorder), workloads_(workloads) {}
  void expect_flow(std::uint32_t id) {
    if (measured_.size() <= id) measured_.resize(id + 1, false);
    measured_[id] = true;
    ++outstanding_;
  }
  void on_flow_complete(const FlowSpec& flow, TimePs at) override {
    if (recorder_.is_complete(flow.id)) return;
    recorder_.on_flow_complete(flow, at);
    for (const auto& workload : workloads_) workload->on_flow_complete(flow, at);
    if (flow.id < measured_.size() && measured_[flow.id]) {
      --outstanding_;
      stop_if_done();
    }
  }
  void on_flow_released(std::uint32_t flow_id, const FlowFinal& final) override {
    recorder_.on_flow_released(flow_id, final.delivered_bytes, final.counters.data_packets,
                               final.counters.control_packets);
  }
  void stop_if_done() {
    if (done()) sim_.stop();
  }
  bool done() const {
    bool anything_measured = !measured_.empty();
    for (const auto& workload : workloads_) {
      if (!workload->measured()) continue;
      if (!workload->finished()) return false;
      anything_measured = true;
    }
    return anything_measured && outstanding_ == 0;
  }

 private:
  Simulator& sim_;
  FlowRecorder& recorder_;
  const std::vector<std::unique_ptr<Workload>>& workloads_;
  std::vector<bool> measured_;
  std::size_t outstanding_ = 0;
};

class Experiment::Host final : public WorkloadHost {
 public:
  Host(Experiment& run, RunShape shape)
      : run_(run),
        shape_(shape),
        timestamp_errors_(run.sim_, run.config_.timestamps, shape.seed,
                          [this](std::uint32_t id, TimePs deadline_ps) {
                            // A delayed update may fall due after the flow completed.
                            if (run_.recorder_->is_complete(id)) return;
                            run_.transport_->update_deadline(id, deadline_ps);
                          }),
        consumer_waits_(run.sim_, [this](std::uint32_t id) {
          // It may have arrived before its consumer's timestamp.
          if (run_.recorder_->is_complete(id)) return;
          timestamp_errors_.on_consumer_waiting(id);
        }) {}
  Simulator& sim() override { return run_.sim_; }
  Transport& transport() override { return *run_.transport_; }
  const RunShape& shape() const override { return shape_; }
  const OpJitter& op_jitter() const override { return run_.config_.op_jitter; }
  // The records keep the true deadline; the transport gets the spec returned.
  FlowSpec register_flow(FlowSpec flow, FlowTerms terms) override {
    const FlowSpec registered = run_.register_flow(flow, terms);
    return timestamp_errors_.as_started(registered,
                                        run_.recorder_->find(registered.id)->ideal_fct_ps);
  }
  std::uint32_t launch(FlowSpec flow, FlowTerms terms) override {
    const FlowSpec seen = register_flow(flow, terms);
    run_.transport_->start_flow(seen);
    return seen.id;
  }
  void announce(const FlowSpec& planned) override {
    if (!timestamp_errors_.active()) run_.transport_->announce_flow(planned);
  }
  void update_deadline(std::uint32_t flow_id, TimePs deadline_ps) override {
    FlowRecord* found = run_.recorder_->find(flow_id);
    // Workloads move only the deadlines of flows still under way.
    if (found == nullptr) throw std::logic_error("update_deadline of a finished, freed flow");
    FlowRecord& record = *found;
    record.spec.deadline_ps = deadline_ps;
    timestamp_errors_.on_update(flow_id, deadline_ps, record.ideal_fct_ps);
  }
  bool listens_for_waiting_consumers() const override {
    return timestamp_errors_.active() && timestamp_errors_.model().waiting_updates;
  }
  void consumer_waiting(std::uint32_t flow_id, TimePs from_ps) override {
    consumer_waits_.watch(flow_id, from_ps);
  }
  std::uint64_t next_random_stream() override { return random_streams_++; }
  void workload_finished() override { run_.watcher_->stop_if_done(); }

  const TimestampErrors& timestamp_errors() const { return timestamp_errors_; }

 private:
  Experiment& run_;
  RunShape shape_;
  TimestampErrors timestamp_errors_;
  ConsumerWaits consumer_waits_;
  std::uint64_t random_streams_ = 0;
};

namespace {

// The transport `name` (given at `key`) with its [transport.NAME] keys read.
std::unique_ptr<TransportSetup> configure_transport(const char* key, const std::string& name,
                                                    const Settings& params) {
  const TransportInfo* info = find_transport(name);
  if (info == nullptr) {
    throw std::invalid_argument(std::string(key) + ": unknown transport '" + name + "'");
  }
  return info->configure(MapReader("transport." + name, params));
}

// Every switch port has one queue discipline, so two tenants can share the
// switches only if both use the default one.
void check_shared_queues(const ExperimentConfig& c, const TransportSetup& main,
                         const TransportSetup& background) {
  const bool main_own = main.queue_factory() != nullptr;
  if (!main_own && background.queue_factory() == nullptr) return;
  throw std::invalid_argument(
      "transport.background: " + (main_own ? c.transport : c.background_transport) +
      " needs its own switch queue discipline, which the other tenant's packets would share; "
      "transport.name = \"" +
      c.transport + "\" and transport.background = \"" + c.background_transport +
      "\" cannot run side by side (mixed tenants need two transports "
      "that both use the default queue)");
}

}  // namespace

Experiment::Experiment(ExperimentConfig config) : config_(std::move(config)) {
  transport_setup_ =
      configure_transport("transport.name", config_.transport, config_.transport_params);
  if (config_.mixed_tenants()) {
    background_setup_ = configure_transport("transport.background", config_.background_transport,
                                            config_.background_transport_params);
    check_shared_queues(config_, *transport_setup_, *background_setup_);
  }

  config_.network.seed = config_.seed;
  if (QueueFactory queues = transport_setup_->queue_factory()) {
    config_.network.queue_factory = std::move(queues);
  }
  network_ = build_network(config_.topology, sim_, pool_, config_.network);

  recorder_ = std::make_unique<FlowRecorder>();
  watcher_ = std::make_unique<CompletionWatcher>(sim_, *recorder_, workloads_);

  env_ = std::make_unique<TransportEnv>(TransportEnv{sim_, *network_, pool_, *watcher_,
                                                     config_.mtu_bytes, config_.header_bytes,
                                                     config_.seed, &grant_observer_});
  if (background_setup_ == nullptr) {
    transport_ = transport_setup_->make(*env_);
  } else {
    transport_ = std::make_unique<TenantMux>(
        *env_, [this](TransportEnv& env) { return transport_setup_->make(env); },
        [this](TransportEnv& env) { return background_setup_->make(env); });
  }

  // Built after the transport: ideal FCTs need routes, and routes need the
  // receivers the transport attached.
  host_ = std::make_unique<Host>(
      *this, RunShape{network_->num_hosts(), config_.topology.host_link.rate_bps, config_.mtu_bytes,
                      config_.header_bytes, config_.seed});
  for (std::size_t i = 0; i < config_.workloads.size(); ++i) {
    workloads_.push_back(config_.workloads[i].build(*host_));
  }
}

FlowSpec Experiment::register_flow(FlowSpec flow, FlowTerms terms) {
  flow.id = static_cast<std::uint32_t>(recorder_->size());
  TimePs ideal = 0;
  try {
    ideal = ideal_fct(flow);
  } catch (const InputError& e) {
    // Found only now, when the flow's route is known (validate builds no
    // routes): name the flow and the workloads that can have made it.
    throw InputError("flow " + std::to_string(flow.id) + " (host " + std::to_string(flow.src) +
                     " to host " + std::to_string(flow.dst) + ", starting at " +
                     std::to_string(ps_to_sec(flow.start_ps)) + " s, from " +
                     config_.workloads.describe() + "): " + e.what());
  }
  if (terms.deadline_factor > 0) {
    flow.deadline_ps =
        flow.start_ps + static_cast<TimePs>(terms.deadline_factor * static_cast<double>(ideal));
  }
  recorder_->add({flow, ideal});
  if (terms.measured) watcher_->expect_flow(flow.id);
  return flow;
}

TimePs Experiment::ideal_fct(const FlowSpec& flow) const {
  const Route route = network_->route(flow.src, flow.dst, flow.id);
  const PathSummary path{route.bottleneck_bps(), route.propagation_ps,
                         std::span(route.rate_bps).subspan(route.links() > 0 ? 1 : 0)};
  return ideal_fct_ps(path, flow.size_bytes, config_.mtu_bytes, config_.header_bytes);
}

// Flows the transport freed have their final counts already; the others'
// are what the transport holds now.
void Experiment::finalize_records() {
  recorder_->for_each_held([this](FlowRecord& record) {
    if (record.released) return;
    record.delivered_bytes = transport_->delivered_bytes(record.spec.id);
    const FlowCounters counters = transport_->flow_counters(record.spec.id);
    record.data_packets = counters.data_packets;
    record.control_packets = counters.control_packets;
  });
  recorder_->settle_held();
}

void Experiment::stream_records(FlowRecorder::Sink sink) {
  if (started_) throw std::logic_error("Experiment::stream_records after the run started");
  recorder_->stream_to(std::move(sink));
}

Experiment::~Experiment() = default;

void Experiment::run_until(TimePs t) {
  if (!started_) {
    started_ = true;
    for (const auto& workload : workloads_) workload->arm();
  }
  if (workloads_.empty()) return;
  if (!watcher_->done()) sim_.run_until(t);
  network_->settle_stats();
  finalize_records();
}

RunReport Experiment::report() const {
  RunReport report;
  for (const auto& workload : workloads_) workload->report(report);
  const TimestampErrors& errors = host_->timestamp_errors();
  if (errors.active()) {  // absent with exact timestamps, as before the model existed
    const TimestampErrorCounts& n = errors.counts();
    report.summary_sections["timestamp_errors"] = {
        {"flows_with_deadline", n.flows_with_deadline},
        {"flows_without_timestamp", n.flows_without_timestamp},
        {"updates", n.updates},
        {"updates_dropped", n.updates_dropped},
        {"updates_delayed", n.updates_delayed}};
    if (errors.model().waiting_updates) {
      report.summary_sections["timestamp_errors"]["consumer_waits"] = n.consumer_waits;
    }
  }
  return report;
}

double Experiment::run() {
  const auto wall_start = std::chrono::steady_clock::now();
  run_until(config_.stop_ps);
  const auto wall_end = std::chrono::steady_clock::now();
  transport_->free_spare_memory();  // not part of the run's wall time
  return std::chrono::duration<double>(wall_end - wall_start).count();
}

NetworkTotals Experiment::network_totals() const {
  NetworkTotals totals;
  const auto& ports = network_->ports();
  for (std::size_t i = 0; i < ports.size(); ++i) {
    const PortStats stats = ports[i]->stats();
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
