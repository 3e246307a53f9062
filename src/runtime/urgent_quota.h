// Who may take how much of the urgent class while identities contend for
// it: the downlink is split among the jobs with urgent work by job weight,
// then each job's part among its identities by identity weight
// (EnforcementConfig::job_weights, peer_weights; 1 when not listed). With
// one job (no roster, or a roster without jobs) this is the identities'
// weighted share. Pure arithmetic: the receive side holds flows to it.
#pragma once

#include <string>
#include <vector>

#include "runtime/endpoint_config.h"

namespace safs::runtime {

struct UrgentClaimant {
  std::string identity;  // a member name, or host:port without a roster
  std::string job;       // its job in the roster ("" without one)
};

// Each claimant's share of `downlink_bps`, in the claimants' order. Each
// claimant is one identity; shares add up to `downlink_bps`.
std::vector<double> urgent_shares(const std::vector<UrgentClaimant>& claimants,
                                  const EnforcementConfig& enforcement, double downlink_bps);

}  // namespace safs::runtime
