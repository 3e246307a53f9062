#include "workload/compute/compute_workload.h"

#include <algorithm>
#include <sstream>

#include "engine/simulator.h"
#include "workload/compute/bubble_account.h"
#include "workload/csv_text.h"

namespace safs {

namespace {

// ops.csv: one row per op (label, GPU, planned and actual start, end, and the
// wait before it).
std::string ops_csv(const ComputeEngine& c) {
  std::ostringstream csv;
  csv << "op,label,gpu,duration_s,planned_start_s,start_s,end_s,wait_s\n";
  for (std::size_t i = 0; i < c.ops().size(); ++i) {
    const ComputeOp& op = c.graph().ops[i];
    const OpRecord& r = c.ops()[i];
    csv << i << ',' << op.label << ',' << op.gpu << ',' << seconds_text(op.duration_ps) << ','
        << seconds_text(r.planned_start_ps) << ','
        << (r.start_ps >= 0 ? seconds_text(r.start_ps) : "") << ','
        << (r.end_ps >= 0 ? seconds_text(r.end_ps) : "") << ',' << seconds_text(r.wait_ps) << '\n';
  }
  return csv.str();
}

// Jittered ops only: how far the real durations strayed from the plan.
nlohmann::ordered_json jitter_json(const ComputeGraph& graph, const RealDurations& real) {
  TimePs planned_ps = 0, real_ps = 0;
  for (std::size_t i = 0; i < graph.ops.size(); ++i) {
    planned_ps += graph.ops[i].duration_ps;
    real_ps += real.duration_ps[i];
  }
  return {{"stragglers", real.stragglers},
          {"planned_compute_s", ps_to_sec(planned_ps)},
          {"real_compute_s", ps_to_sec(real_ps)}};
}

nlohmann::ordered_json compute_json(const ComputeEngine& c) {
  nlohmann::ordered_json j;
  j["finished"] = c.finished();
  j["iteration_time_s"] = ps_to_sec(c.makespan_ps());
  j["planned_iteration_time_s"] = ps_to_sec(c.planned_makespan_ps());
  j["exposed_communication_s"] = ps_to_sec(c.makespan_ps() - c.planned_makespan_ps());
  const BubbleAccount account(c);  // the trace draws the same account
  nlohmann::ordered_json bubbles = nlohmann::ordered_json::array();
  for (std::size_t g = 0; g < c.graph().gpu_order.size(); ++g) {
    if (c.graph().gpu_order[g].empty()) continue;
    const int gpu = static_cast<int>(g);
    bubbles.push_back({{"gpu", g},
                       {"bubble_s", ps_to_sec(account.gpu(gpu).total_ps())},
                       {"bubble_fraction", account.fraction(gpu)}});
  }
  j["gpus"] = bubbles;
  std::size_t late = 0, updates = 0;
  double lateness_sum = 0, max_lateness = 0;
  for (const TransferRecord& t : c.transfers()) {
    updates += t.deadline_updates;
    if (t.arrived_ps < 0) continue;
    const double lateness = ps_to_sec(t.arrived_ps - t.deadline_ps);
    if (lateness > 0) {
      ++late;
      lateness_sum += lateness;
      max_lateness = std::max(max_lateness, lateness);
    }
  }
  j["transfers"] = {
      {"total", c.transfers().size()},
      {"late", late},
      {"mean_lateness_of_late_s", late > 0 ? lateness_sum / static_cast<double>(late) : 0.0},
      {"max_lateness_s", max_lateness},
      {"timestamp_updates", updates}};
  return j;
}

}  // namespace

ComputeHooks compute_hooks(WorkloadHost& host) {
  ComputeHooks hooks;
  hooks.launch = [&host](const FlowSpec& flow) { return host.launch(flow, {}); };
  hooks.announce = [&host](const FlowSpec& planned) { host.announce(planned); };
  hooks.update_deadline = [&host](std::uint32_t id, TimePs deadline_ps) {
    host.update_deadline(id, deadline_ps);
  };
  hooks.on_finished = [&host] { host.workload_finished(); };
  if (host.listens_for_waiting_consumers()) {
    hooks.consumer_waiting = [&host](std::uint32_t id, TimePs from_ps) {
      host.consumer_waiting(id, from_ps);
    };
  }
  return hooks;
}

std::unique_ptr<Workload> make_workload(const ComputeGraph& graph, WorkloadHost& host) {
  return std::make_unique<ComputeWorkload>(host, graph);
}

std::string describe_workload(const ComputeGraph& graph) {
  const auto gpus = std::count_if(graph.gpu_order.begin(), graph.gpu_order.end(),
                                  [](const std::vector<int>& order) { return !order.empty(); });
  return (graph.job > 0 ? "job " + std::to_string(graph.job + 1) + ": " : std::string()) +
         "a computation of " + std::to_string(graph.ops.size()) + " ops on " +
         std::to_string(gpus) + " GPUs";
}

RealDurations real_durations(const ComputeGraph& graph, WorkloadHost& host) {
  const OpJitter& jitter = host.op_jitter();
  if (!jitter.active()) return {};  // as planned, and no random stream taken
  return draw_real_durations(graph, jitter, host.shape().seed, host.next_random_stream());
}

ComputeWorkload::ComputeWorkload(WorkloadHost& host, ComputeGraph graph)
    : real_(safs::real_durations(graph, host)),
      engine_(host.sim(), std::move(graph), compute_hooks(host), real_.duration_ps) {}

std::optional<WorkloadProgress> ComputeWorkload::progress() const {
  double done = 0;
  for (const OpRecord& op : engine_.ops()) done += op.end_ps >= 0 ? 1 : 0;
  return WorkloadProgress{done, static_cast<double>(engine_.ops().size()), "ops"};
}

std::string ComputeWorkload::unfinished_note() const {
  return finished() ? "" : "the computation did not finish by simulation.stop_ms";
}

void ComputeWorkload::report(RunReport& report) const {
  const int job = engine_.graph().job;
  report.files.emplace_back(job_output_name("ops", job, ".csv"), ops_csv(engine_));
  nlohmann::ordered_json compute = compute_json(engine_);
  if (!real_.duration_ps.empty()) compute["op_jitter"] = jitter_json(engine_.graph(), real_);
  report.summary_sections[job_output_name("compute", job)] = std::move(compute);
}

std::string job_output_name(std::string_view base, int job, std::string_view extension) {
  std::string name(base);
  if (job > 0) name += "_" + std::to_string(job + 1);
  return name.append(extension);
}

}  // namespace safs
