#include "workload/inference/inference_report.h"

#include <algorithm>
#include <sstream>

#include "metrics/summary.h"
#include "workload/csv_text.h"

namespace safs {

TpotSummary summarize_tpot(const InferenceDriver& driver) {
  std::vector<double> tpot;
  for (const Request& r : driver.requests()) {
    if (driver.measured(r) && r.finished()) tpot.push_back(r.tpot_s());
  }
  TpotSummary s;
  s.requests = tpot.size();
  if (tpot.empty()) return s;
  double sum = 0;
  for (const double t : tpot) sum += t;
  s.mean_s = sum / static_cast<double>(tpot.size());
  s.max_s = *std::max_element(tpot.begin(), tpot.end());
  s.p50_s = percentile(tpot, 50);
  s.p99_s = percentile(std::move(tpot), 99);
  return s;
}

nlohmann::ordered_json inference_json(const InferenceDriver& driver) {
  const TpotSummary tpot = summarize_tpot(driver);
  const std::vector<StepRecord>& steps = driver.steps();
  std::vector<double> step_ms;
  double step_sum_s = 0, compute_only_sum_s = 0;
  std::uint64_t transfers = 0, late = 0, tokens = 0;
  double max_lateness_s = 0, attention_wait_s = 0, ffn_wait_s = 0;
  for (const StepRecord& s : steps) {
    if (s.end_ps <= s.start_ps) continue;  // the step running when the run stopped
    step_ms.push_back(ps_to_sec(s.end_ps - s.start_ps) * 1e3);
    step_sum_s += ps_to_sec(s.end_ps - s.start_ps);
    compute_only_sum_s += ps_to_sec(s.compute_only_ps);
    transfers += s.transfers;
    late += s.late_transfers;
    tokens += s.tokens;
    max_lateness_s = std::max(max_lateness_s, ps_to_sec(s.max_lateness_ps));
    attention_wait_s += ps_to_sec(s.attention_wait_ps);
    ffn_wait_s += ps_to_sec(s.ffn_wait_ps);
  }
  const double n = static_cast<double>(std::max<std::size_t>(step_ms.size(), 1));
  const AfdSpec& afd = driver.workload().afd;
  nlohmann::ordered_json j;
  j["finished"] = driver.finished();
  j["attention_instances"] = afd.attention_instances();
  j["ffn_instances"] = afd.ffn_instances();
  j["arrivals_per_s"] = driver.arrivals_per_s();
  j["requests_measured"] = tpot.requests;
  j["tpot_p50_ms"] = tpot.p50_s * 1e3;
  j["tpot_p99_ms"] = tpot.p99_s * 1e3;
  j["tpot_mean_ms"] = tpot.mean_s * 1e3;
  j["tpot_max_ms"] = tpot.max_s * 1e3;
  j["steps"] = step_ms.size();
  j["mean_batch_tokens"] = static_cast<double>(tokens) / n;
  j["step_mean_ms"] = step_sum_s * 1e3 / n;
  j["step_p50_ms"] = step_ms.empty() ? 0.0 : percentile(step_ms, 50);
  j["step_p99_ms"] = step_ms.empty() ? 0.0 : percentile(step_ms, 99);
  j["compute_only_step_mean_ms"] = compute_only_sum_s * 1e3 / n;
  j["compute_only_full_batch_step_ms"] = ps_to_sec(driver.full_batch_step_ps()) * 1e3;
  j["transfers"] = {
      {"total", transfers},
      {"late", late},
      {"late_fraction",
       transfers > 0 ? static_cast<double>(late) / static_cast<double>(transfers) : 0.0},
      {"max_lateness_s", max_lateness_s}};
  // The waits part of each step's bubble account (bubble_account.h): hosts
  // idle before ops for their inputs, not after their last op of a step.
  j["bubble_fraction"] = {
      {"attention",
       step_sum_s > 0 ? attention_wait_s / (step_sum_s * afd.attention_instances()) : 0.0},
      {"ffn", step_sum_s > 0 ? ffn_wait_s / (step_sum_s * afd.ffn_instances()) : 0.0}};
  if (driver.op_jitter().active()) j["op_jitter"] = {{"stragglers", driver.stragglers()}};
  return j;
}

std::string requests_csv(const InferenceDriver& driver) {
  std::ostringstream csv;
  csv << "request,arrival_s,output_tokens,instance,microbatch,first_token_s,last_token_s,"
         "tokens_done,tpot_s,measured\n";
  for (const Request& r : driver.requests()) {
    csv << r.index << ',' << seconds_text(ps_to_sec(r.arrival_ps)) << ',' << r.output_tokens << ','
        << r.instance << ',' << r.microbatch << ','
        << (r.first_token_ps >= 0 ? seconds_text(ps_to_sec(r.first_token_ps)) : "") << ','
        << (r.last_token_ps >= 0 ? seconds_text(ps_to_sec(r.last_token_ps)) : "") << ','
        << r.tokens_done << ',' << (r.finished() ? seconds_text(r.tpot_s()) : "") << ','
        << (driver.measured(r) ? 1 : 0) << '\n';
  }
  return csv.str();
}

std::string steps_csv(const InferenceDriver& driver) {
  std::ostringstream csv;
  csv << "step,start_s,end_s,duration_s,compute_only_s,tokens,transfers,late_transfers,"
         "max_lateness_s,attention_wait_s,ffn_wait_s\n";
  const std::vector<StepRecord>& steps = driver.steps();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const StepRecord& s = steps[i];
    if (s.end_ps <= s.start_ps) {  // still running when the run stopped
      csv << i << ',' << seconds_text(ps_to_sec(s.start_ps)) << ",,,," << s.tokens << ",,,,,\n";
      continue;
    }
    csv << i << ',' << seconds_text(ps_to_sec(s.start_ps)) << ','
        << seconds_text(ps_to_sec(s.end_ps)) << ','
        << seconds_text(ps_to_sec(s.end_ps - s.start_ps)) << ','
        << seconds_text(ps_to_sec(s.compute_only_ps)) << ',' << s.tokens << ',' << s.transfers
        << ',' << s.late_transfers << ',' << seconds_text(ps_to_sec(s.max_lateness_ps)) << ','
        << seconds_text(ps_to_sec(s.attention_wait_ps)) << ','
        << seconds_text(ps_to_sec(s.ffn_wait_ps)) << '\n';
  }
  return csv.str();
}

}  // namespace safs
