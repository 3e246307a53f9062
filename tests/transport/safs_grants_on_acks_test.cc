// Grants on ACKs (grant_carrier_wait_us): a grant rides an ACK of its flow
// instead of a packet of its own when one leaves soon enough, and goes alone
// when none does. The claims of docs/safs.md, "Grants on ACKs".
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "support/experiments.h"
#include "transport/safs/safs_header.h"

namespace safs {
namespace {

TEST(SafsGrantsOnAcks, HeaderRoundTripMarksTheAckAndAddsTheOption) {
  core::Grant in;
  in.rate_bps = 12.5e9;
  in.valid_for_ps = 500 * kPsPerUs;
  in.byte_cap = 847'000;
  in.epoch = 0xfffffff0u;
  in.priority = 6;
  Packet ack;
  ack.wire_bytes = 66;
  EXPECT_FALSE(safs_header::ack_carries_grant(ack));
  safs_header::put_grant_on_ack(ack, in, 77);
  EXPECT_TRUE(safs_header::ack_carries_grant(ack));
  EXPECT_EQ(ack.wire_bytes, 66 + safs_header::kGrantOptionBytes);
  const core::Grant out = safs_header::get_grant(ack);
  EXPECT_EQ(out.rate_bps, in.rate_bps);
  EXPECT_EQ(out.valid_for_ps, in.valid_for_ps);  // the marker bit is not part of the lease
  EXPECT_EQ(out.byte_cap, in.byte_cap);
  EXPECT_EQ(out.epoch, in.epoch);
  EXPECT_EQ(out.priority, in.priority);
  EXPECT_EQ(safs_header::grant_known_version(ack), 77u);
}

struct CarrierRun {
  std::uint64_t scheduling_packets = 0;
  std::uint64_t on_acks = 0;
  std::uint64_t after_waiting = 0;
  std::uint64_t decreases_held = 0;
  std::uint64_t longest_hold_ns = 0;
  bool counted = false;  // the mechanism's counts are in the stats
  int urgent = 0;
  int urgent_met = 0;
  TimePs last_finish_ps = 0;
};

// The transport's count `name` in summary.json's transport_stats, if it writes one.
std::optional<std::uint64_t> mechanism_count(const Experiment& e, const std::string& name) {
  for (const MechanismCount& c : e.transport().mechanism_stats()) {
    if (c.name == name) return c.value;
  }
  return std::nullopt;
}

// Twelve rounds of the AFD dispatch pattern (testing::repeated_dispatch),
// where learned blind caps leave the transfers waiting for grants.
CarrierRun run_dispatch(double wait_us, double control_delay_us = 5) {
  ExperimentConfig config = testing::repeated_dispatch(12);
  config.transport_params["grant_carrier_wait_us"] = wait_us;
  config.transport_params["control_delay_us"] = control_delay_us;
  Experiment e(config);
  e.run_until(config.stop_ps);
  CarrierRun run;
  run.scheduling_packets = e.transport().stats().scheduling_packets;
  const std::optional<std::uint64_t> on_acks = mechanism_count(e, "grants_on_acks");
  run.counted = on_acks.has_value();
  run.on_acks = on_acks.value_or(0);
  run.after_waiting = mechanism_count(e, "grants_after_waiting").value_or(0);
  run.decreases_held = mechanism_count(e, "decreases_held_for_acks").value_or(0);
  run.longest_hold_ns = mechanism_count(e, "longest_grant_hold_ns").value_or(0);
  for (const FlowRecord& r : e.recorder().records()) {
    EXPECT_TRUE(r.complete()) << "flow " << r.spec.id;
    if (r.spec.flow_class == FlowClass::kUrgent) {
      ++run.urgent;
      run.urgent_met += r.met_deadline() ? 1 : 0;
    }
    run.last_finish_ps = std::max(run.last_finish_ps, r.finish_ps);
  }
  return run;
}

// Measured, with a 10 us control delay either way: 719 scheduling packets
// alone, 204 with a 6 us wait (375 grants on ACKs, 10 sent alone after
// waiting), 177 of 192 deadlines met either way, the last transfer done
// 1.3 us later.
TEST(SafsGrantsOnAcks, TheDispatchPatternsGrantsRideItsAcks) {
  const CarrierRun alone = run_dispatch(0, 10);
  const CarrierRun carried = run_dispatch(6, 10);
  EXPECT_FALSE(alone.counted) << "off, the outputs are as without the mechanism";
  ASSERT_TRUE(carried.counted);
  ASSERT_EQ(alone.urgent, 192);
  EXPECT_GE(carried.urgent_met, alone.urgent_met);
  EXPECT_GT(carried.on_acks, carried.after_waiting);
  EXPECT_LT(carried.scheduling_packets * 3, alone.scheduling_packets)
      << carried.scheduling_packets << " against " << alone.scheduling_packets;
  EXPECT_LE(static_cast<double>(carried.last_finish_ps),
            1.001 * static_cast<double>(alone.last_finish_ps));
}

// A grant waits for an ACK only within the control delay the scheduler
// counts on, less its flight with a full packet ahead at every hop (on this
// star 2.7 us: two 1 us links, 0.33 us per packet ahead). With a 5 us delay
// grants, decreases among them, wait up to 2.3 us of the 6 allowed; with
// 2.5 us none may wait, and only the ACKs leaving as a grant is made carry
// one.
TEST(SafsGrantsOnAcks, AGrantWaitsOnlyWithinTheControlDelay) {
  const CarrierRun roomy = run_dispatch(6, 5);
  const CarrierRun tight = run_dispatch(6, 2.5);
  EXPECT_GT(roomy.decreases_held, 0u);
  EXPECT_GT(roomy.longest_hold_ns, 2'000u);
  EXPECT_LE(roomy.longest_hold_ns, 2'340u);
  EXPECT_EQ(tight.decreases_held, 0u);
  EXPECT_EQ(tight.longest_hold_ns, 0u);
  EXPECT_GT(tight.on_acks, 0u);
  EXPECT_EQ(tight.after_waiting, 0u);
  EXPECT_GT(tight.scheduling_packets, roomy.scheduling_packets);
}

}  // namespace
}  // namespace safs
