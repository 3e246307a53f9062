#include "timeline/timeline_trace.h"

#include <filesystem>

#include "console/bad_input.h"
#include "timeline/trace_compute.h"
#include "timeline/trace_flows.h"
#include "timeline/trace_ports.h"
#include "trace/time_ordered_batch.h"
#include "workload/compute/compute_workload.h"
#include "workload/inference/inference_driver.h"

namespace safs::timeline {

namespace {

trace::TraceWindow window_of(const TraceOptions& o) {
  trace::TraceWindow window;
  window.from_ps = ms_to_ps(o.from_ms);
  if (o.to_ms >= 0) window.to_ps = ms_to_ps(o.to_ms);
  if (window.to_ps < window.from_ps)
    throw console::BadInput("--trace-to-ms is before --trace-from-ms");
  return window;
}

}  // namespace

TimelineTrace::TimelineTrace(Experiment& experiment, SamplerFanout& samplers,
                             const TraceOptions& options)
    : experiment_(experiment),
      path_(options.path),
      partial_path_(options.path + ".partial"),
      run_budget_(options.max_events / 2) {
  const trace::TraceWindow window = window_of(options);
  TracePortSelection ports = select_trace_ports(experiment.network(), options.ports);
  ports_ = std::move(ports.ports);
  only_receivers_ = ports.only_receivers;
  receives_.assign(experiment.network().num_hosts(), false);
  const std::filesystem::path parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  file_.open(partial_path_, std::ios::binary | std::ios::trunc);
  if (!file_) throw console::BadInput("--trace: cannot write " + partial_path_);
  writer_ = std::make_unique<trace::ChromeTraceWriter>(file_, window, options.max_events);
  tracks_ = std::make_unique<TraceTracks>(*writer_, experiment.network().num_hosts());

  experiment.set_grant_observer([this](TimePs at, std::uint32_t flow, double rate, int host) {
    on_grant(at, flow, rate, host);
  });
  if (InferenceDriver* inference = experiment.find_workload<InferenceDriver>()) {
    inference->set_step_observer([this](const ComputeEngine& engine) { on_step(engine); });
  }
  if (!ports_.empty()) {
    last_queue_bytes_.assign(ports_.size(), -1);
    samplers.add(us_to_ps(options.sample_us), [this](TimePs at) { sample_queues(at); });
  }
}

bool TimelineTrace::run_budget_left(TimePs now_ps) {
  if (writer_->events_written() < run_budget_) return true;
  writer_->cut_at(now_ps);
  return false;
}

void TimelineTrace::on_grant(TimePs at, std::uint32_t flow_id, double rate_bps, int receiver_host) {
  if (!writer_->window().contains(at) || !run_budget_left(at)) return;
  trace::TraceArgs args;
  args.add("flow", flow_id).add_fixed("rate_gbps", rate_bps / 1e9, 3);
  writer_->instant(tracks_->grants(receiver_host), "grant", "grant", at, args);
}

void TimelineTrace::on_step(const ComputeEngine& engine) {
  const long step = steps_seen_++;
  if (!run_budget_left(experiment_.sim().now())) return;
  trace::TimeOrderedBatch batch(*writer_);
  trace_compute_ops(engine, step, experiment_.sim().now(), *tracks_, batch);
  batch.write();
}

void TimelineTrace::sample_queues(TimePs at) {
  if (!writer_->window().contains(at) || !run_budget_left(at)) return;
  const Network& net = experiment_.network();
  if (only_receivers_) note_new_receivers();
  for (std::size_t k = 0; k < ports_.size(); ++k) {
    if (only_receivers_ && !receives_[net.port_peer(ports_[k])]) continue;
    const Port& port = *net.ports()[ports_[k]];
    const auto bytes = static_cast<std::int64_t>(port.queue().bytes());
    if (bytes == last_queue_bytes_[k]) continue;  // a counter holds its value until changed
    last_queue_bytes_[k] = bytes;
    writer_->counter(tracks_->queues_pid(), port.name(), at,
                     trace::TraceArgs().add("queue_bytes", bytes));
  }
}

void TimelineTrace::note_new_receivers() {
  const std::vector<FlowRecord>& records = experiment_.recorder().records();
  // Listed flows are known from the start; generated ones when they start.
  for (; records_seen_ < records.size(); ++records_seen_) {
    receives_[records[records_seen_].spec.dst] = true;
  }
}

void TimelineTrace::finish() {
  const TimePs run_end_ps = experiment_.sim().now();
  trace::TimeOrderedBatch batch(*writer_);
  for (const auto& workload : experiment_.workloads()) {  // every job, each on GPUs of its own
    if (const auto* compute = dynamic_cast<const ComputeWorkload*>(workload.get())) {
      trace_compute_ops(compute->engine(), -1, run_end_ps, *tracks_, batch);
    }
  }
  if (const auto* inference = experiment_.find_workload<InferenceDriver>()) {
    if (const ComputeEngine* step = inference->running_step()) {
      trace_compute_ops(*step, steps_seen_, run_end_ps, *tracks_, batch);
    }
  }
  trace_receiver_flows(experiment_.recorder().records(), run_end_ps, *tracks_, batch);
  batch.write();
  writer_->finish();
  file_.close();
  if (!file_) throw std::runtime_error("--trace: writing " + partial_path_ + " failed");
  std::filesystem::rename(partial_path_, path_);
}

}  // namespace safs::timeline
