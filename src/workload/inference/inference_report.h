// Outputs of an inference run: requests.csv (one row per request with its
// tokens and TPOT), steps.csv (one row per decode step) and the "inference"
// section of summary.json (TPOT percentiles over the measured requests).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "workload/inference/inference_driver.h"

namespace safs {

struct TpotSummary {
  std::size_t requests = 0;  // measured and finished
  double p50_s = 0, p99_s = 0, mean_s = 0, max_s = 0;
};
TpotSummary summarize_tpot(const InferenceDriver& driver);

nlohmann::ordered_json inference_json(const InferenceDriver& driver);
std::string requests_csv(const InferenceDriver& driver);
std::string steps_csv(const InferenceDriver& driver);

}  // namespace safs
