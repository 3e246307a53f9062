// The urgent class's split among contending identities: by job weight
// first, then by identity weight within a job; with one job, by identity
// weight alone (as before jobs had weights).
#include "runtime/urgent_quota.h"

#include <gtest/gtest.h>

#include <numeric>

namespace safs::runtime {
namespace {

constexpr double kDownlinkBps = 400e6;

TEST(UrgentQuota, OneJobSplitsByIdentityWeight) {
  EnforcementConfig enforcement;
  enforcement.peer_weights = {{"10.0.0.1:7000", 2.0}};
  const auto shares =
      urgent_shares({{"10.0.0.1:7000", ""}, {"10.0.0.2:7000", ""}}, enforcement, kDownlinkBps);
  ASSERT_EQ(shares.size(), 2u);
  EXPECT_DOUBLE_EQ(shares[0], kDownlinkBps * 2 / 3);
  EXPECT_DOUBLE_EQ(shares[1], kDownlinkBps / 3);
}

TEST(UrgentQuota, JobsSplitFirstThenTheirMembers) {
  EnforcementConfig enforcement;
  enforcement.job_weights = {{"training", 3.0}};  // "inference" weighs 1
  // Two members of training against one of inference: the job with more
  // members does not get more for it, only its weight does.
  const std::vector<UrgentClaimant> claimants = {
      {"rank-0", "training"}, {"rank-1", "training"}, {"decoder", "inference"}};
  const auto shares = urgent_shares(claimants, enforcement, kDownlinkBps);
  EXPECT_DOUBLE_EQ(shares[0], kDownlinkBps * 3 / 4 / 2);
  EXPECT_DOUBLE_EQ(shares[1], kDownlinkBps * 3 / 4 / 2);
  EXPECT_DOUBLE_EQ(shares[2], kDownlinkBps / 4);
  EXPECT_DOUBLE_EQ(std::accumulate(shares.begin(), shares.end(), 0.0), kDownlinkBps);
  // Within a job, identity weights still apply.
  enforcement.peer_weights = {{"rank-0", 3.0}};
  const auto weighted = urgent_shares(claimants, enforcement, kDownlinkBps);
  EXPECT_DOUBLE_EQ(weighted[0], kDownlinkBps * 3 / 4 * 3 / 4);
  EXPECT_DOUBLE_EQ(weighted[1], kDownlinkBps * 3 / 4 / 4);
  EXPECT_DOUBLE_EQ(weighted[2], kDownlinkBps / 4);
}

TEST(UrgentQuota, AJobWithoutUrgentWorkTakesNoShare) {
  EnforcementConfig enforcement;
  enforcement.job_weights = {{"training", 3.0}, {"idle", 100.0}};
  const auto shares =
      urgent_shares({{"rank-0", "training"}, {"decoder", "inference"}}, enforcement, kDownlinkBps);
  EXPECT_DOUBLE_EQ(shares[0], kDownlinkBps * 3 / 4);
  EXPECT_DOUBLE_EQ(shares[1], kDownlinkBps / 4);
}

}  // namespace
}  // namespace safs::runtime
