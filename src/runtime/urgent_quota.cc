#include "runtime/urgent_quota.h"

#include <map>

namespace safs::runtime {
namespace {

double weight_of(const std::map<std::string, double>& weights, const std::string& key) {
  const auto it = weights.find(key);
  return it == weights.end() ? 1.0 : it->second;
}

}  // namespace

std::vector<double> urgent_shares(const std::vector<UrgentClaimant>& claimants,
                                  const EnforcementConfig& enforcement, double downlink_bps) {
  std::map<std::string, double> identity_weight_by_job;  // of its claimants
  for (const UrgentClaimant& c : claimants) {
    identity_weight_by_job[c.job] += weight_of(enforcement.peer_weights, c.identity);
  }
  double total_job_weight = 0;
  for (const auto& [job, identities] : identity_weight_by_job) {
    total_job_weight += weight_of(enforcement.job_weights, job);
  }
  std::vector<double> shares;
  shares.reserve(claimants.size());
  for (const UrgentClaimant& c : claimants) {
    const double job_part =
        downlink_bps * weight_of(enforcement.job_weights, c.job) / total_job_weight;
    shares.push_back(job_part * weight_of(enforcement.peer_weights, c.identity) /
                     identity_weight_by_job.at(c.job));
  }
  return shares;
}

}  // namespace safs::runtime
