#include "core/blind_budget.h"

#include <gtest/gtest.h>

namespace safs::core {
namespace {

constexpr BlindBudgetOptions kOptions{
    .decrease_factor = 0.5, .growth_interval_ps = 10 * kPsPerMs, .packet_bytes = 4096};

TEST(BlindBudget, NoCapUntilABlindLoss) {
  const BlindBudget budget;
  EXPECT_FALSE(budget.capped());
  EXPECT_EQ(budget.cap_bytes(kOptions, 5 * kPsPerSec), BlindBudget::kNoCap);
}

TEST(BlindBudget, ALossHalvesWhatTheFlowSentBlind) {
  BlindBudget budget;
  budget.on_blind_loss(kOptions, 57'344, kPsPerMs);
  EXPECT_TRUE(budget.capped());
  EXPECT_EQ(budget.cap_bytes(kOptions, kPsPerMs), 28'672u);
}

TEST(BlindBudget, GrowsBackOnePacketPerLossFreeInterval) {
  BlindBudget budget;
  budget.on_blind_loss(kOptions, 57'344, 0);
  EXPECT_EQ(budget.cap_bytes(kOptions, 10 * kPsPerMs), 28'672u + 4096u);
  EXPECT_EQ(budget.cap_bytes(kOptions, 25 * kPsPerMs), 28'672u + 10'240u);  // 2.5 packets
}

TEST(BlindBudget, NeverGrowsWithAZeroInterval) {
  BlindBudgetOptions options = kOptions;
  options.growth_interval_ps = 0;
  BlindBudget budget;
  budget.on_blind_loss(options, 57'344, 0);
  EXPECT_EQ(budget.cap_bytes(options, 100 * kPsPerSec), 28'672u);
}

// A flow that started before the last loss sent more blind than the cap now
// allows; its own loss halves the cap in force, not what it sent.
TEST(BlindBudget, AnOlderFlowsLossDoesNotRaiseTheCap) {
  BlindBudget budget;
  budget.on_blind_loss(kOptions, 57'344, 0);
  budget.on_blind_loss(kOptions, 57'344, 0);
  EXPECT_EQ(budget.cap_bytes(kOptions, 0), 14'336u);
  budget.on_blind_loss(kOptions, 8'192, 0);  // a flow capped lower than that
  EXPECT_EQ(budget.cap_bytes(kOptions, 0), 4'096u);
}

TEST(BlindBudget, NeverBelowOnePacket) {
  BlindBudget budget;
  for (int i = 0; i < 20; ++i) budget.on_blind_loss(kOptions, 57'344, 0);
  EXPECT_EQ(budget.cap_bytes(kOptions, 0), 4096u);
}

TEST(BlindBudget, GrowthRestartsFromEachLoss) {
  BlindBudget budget;
  budget.on_blind_loss(kOptions, 57'344, 0);
  // 30 ms later the cap has grown three packets; a loss then halves that.
  budget.on_blind_loss(kOptions, 57'344, 30 * kPsPerMs);
  EXPECT_EQ(budget.cap_bytes(kOptions, 30 * kPsPerMs), (28'672u + 3 * 4096u) / 2);
}

}  // namespace
}  // namespace safs::core
