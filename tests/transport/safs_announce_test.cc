// Transfers announced ahead in the simulator (transport.safs.announce_ahead):
// a stage's sender announces each activation when the op that produces it
// starts, its receiver plans it in, and the transfer starts under the
// planned grant, with no blind bytes, next to background into the same host.
#include <gtest/gtest.h>

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "experiment/experiment.h"
#include "net/packet_tap.h"
#include "net/port.h"
#include "support/experiments.h"
#include "transport/safs/safs_header.h"
#include "workload/compute/compute_graph.h"
#include "workload/compute/compute_workload.h"

namespace safs {
namespace {

constexpr int kMicrobatches = 4;
constexpr std::uint64_t kActivationBytes = 1'000'000;  // 80 us, about 10 BDPs, at 100 Gbit/s

// What host 0's NIC sends: announcements, and urgent data sent blind.
class SenderTap final : public PacketTap {
 public:
  void on_transmit(const Port& /*port*/, const Packet& p, TimePs /*at*/) override {
    if (p.message_type == safs_header::kAnnounce) ++announcements;
    if (p.message_type == window_header::kData) {
      const safs_header::Semantics s = safs_header::get_semantics(p);
      if (s.urgent && s.unscheduled) ++blind_urgent_packets;
    }
  }
  int announcements = 0;
  int blind_urgent_packets = 0;
};

struct AnnounceRun {
  std::vector<MechanismCount> counts;  // the transport's, for summary.json
  int announcements = 0;
  int blind_urgent_packets = 0;
  int late_transfers = 0;
  std::uint64_t urgent_control_packets = 0;
  std::uint64_t scheduling_packets = 0;
};

// Stage 0 (host 0) runs F0..F3, 150 us each; each sends its activation to
// stage 1 (host 1), which runs 250 us of other work before each F that
// consumes one (100 us): each activation has 100 us of slack or more. Host 2
// sends host 1 a long background flow throughout. With `other_work` false
// stage 1 has nothing else to do: each activation is due as its producer
// ends.
AnnounceRun run(bool announce_ahead, std::uint64_t activation_bytes = kActivationBytes,
                bool other_work = true) {
  ComputeGraph g;
  for (int m = 0; m < kMicrobatches; ++m) {
    const int producer = g.add_op(0, 150 * kPsPerUs, "F s0");
    if (other_work) g.add_op(1, 250 * kPsPerUs, "other work s1");
    const int consumer = g.add_op(1, 100 * kPsPerUs, "F s1");
    g.add_transfer(producer, consumer, activation_bytes);
  }
  ExperimentConfig config = testing::star(3);
  config.transport = "safs";
  config.transport_params["announce_ahead"] = announce_ahead;
  config.workloads.add(std::move(g));
  testing::add_flow(config, 2, 1, 200'000'000);
  Experiment e(config);
  SenderTap tap;
  e.network().nic(0).set_tap(&tap);
  e.run();
  AnnounceRun out;
  out.announcements = tap.announcements;
  out.blind_urgent_packets = tap.blind_urgent_packets;
  for (const FlowRecord& r : e.recorder().records()) {
    if (r.spec.flow_class != FlowClass::kUrgent) continue;
    out.late_transfers += r.met_deadline() ? 0 : 1;
    out.urgent_control_packets += r.control_packets;
  }
  out.scheduling_packets = e.transport().stats().scheduling_packets;
  out.counts = e.transport().mechanism_stats();
  return out;
}

// The transport's count of `name`; fails the test if it has none.
std::uint64_t count_of(const AnnounceRun& run, std::string_view name) {
  for (const MechanismCount& c : run.counts) {
    if (name == c.name) return c.value;
  }
  ADD_FAILURE() << "no count " << name;
  return 0;
}

TEST(SafsAnnounce, TransfersStartUnderTheirPlannedGrantWithNoBlindBytes) {
  const AnnounceRun off = run(false);
  const AnnounceRun on = run(true);
  EXPECT_EQ(off.announcements, 0);
  EXPECT_GT(off.blind_urgent_packets, 0);
  // The first activation is announced when F0 starts, with the run: its
  // plan is due at once, and it starts under its grant like the rest.
  EXPECT_EQ(on.announcements, kMicrobatches);
  EXPECT_EQ(on.blind_urgent_packets, 0);
  EXPECT_EQ(on.late_transfers, 0);
  // Handed the plan's lease, a transfer needs no first grant of its own,
  // and here the announcements and planned grants (two per transfer) cost
  // no more than the grants they save.
  EXPECT_LT(on.urgent_control_packets, off.urgent_control_packets);
  EXPECT_LE(on.scheduling_packets, off.scheduling_packets);
  // What the run reports of it: every transfer announced, planned, and
  // started under its plan; none warned of.
  EXPECT_TRUE(off.counts.empty());  // off, a run's outputs are as before
  EXPECT_EQ(count_of(on, "announcements"), std::uint64_t{kMicrobatches});
  EXPECT_EQ(count_of(on, "flows_on_plans"), std::uint64_t{kMicrobatches});
  EXPECT_EQ(count_of(on, "announcements_infeasible"), 0u);
  EXPECT_EQ(count_of(on, "announcements_dropped"), 0u);
  EXPECT_EQ(count_of(on, "announcements_given_up"), 0u);
  EXPECT_EQ(count_of(on, "announced_unwarned_on_time"), std::uint64_t{kMicrobatches});
  EXPECT_EQ(count_of(on, "announced_warned_late") + count_of(on, "announced_warned_on_time") +
                count_of(on, "announced_unwarned_late"),
            0u);
}

// Activations of 3 MB (240 us at the link) due as their 150 us producer
// ends: no order could deliver them on time, and the receiver says so when
// they are announced, before the first byte is sent.
TEST(SafsAnnounce, AnInfeasibleAnnouncedSetIsWarnedOf) {
  const AnnounceRun on = run(true, 3'000'000, false);
  EXPECT_GT(on.late_transfers, 0);
  EXPECT_EQ(count_of(on, "announcements"), std::uint64_t{kMicrobatches});
  EXPECT_EQ(count_of(on, "announcements_infeasible"), std::uint64_t{kMicrobatches});
  // Each warned of, each late: the warning came before its first byte.
  EXPECT_EQ(count_of(on, "announced_warned_late"), std::uint64_t{kMicrobatches});
}

// A 2 MB activation (160 us at the link) from a 400 us producer, due as the
// consumer's 500 us of other work ends: 500 us away when announced, but only
// 100 us after its producer ends. Warned of for its own start (taken to
// start at once with the set, it would fit), and late.
TEST(SafsAnnounce, ATransferThatCannotBeOnTimeFromItsOwnStartIsWarnedOf) {
  ComputeGraph g;
  const int producer = g.add_op(0, 400 * kPsPerUs, "F s0");
  g.add_op(1, 500 * kPsPerUs, "other work s1");
  const int consumer = g.add_op(1, 100 * kPsPerUs, "F s1");
  g.add_transfer(producer, consumer, 2'000'000);
  ExperimentConfig config = testing::star(2);
  config.transport = "safs";
  config.transport_params["announce_ahead"] = true;
  config.workloads.add(std::move(g));
  Experiment e(config);
  e.run();
  AnnounceRun out;
  out.counts = e.transport().mechanism_stats();
  EXPECT_EQ(count_of(out, "announcements"), 1u);
  EXPECT_EQ(count_of(out, "announcements_infeasible"), 1u);
  EXPECT_EQ(count_of(out, "announced_warned_late"), 1u);
}

TEST(SafsAnnounce, TransportsThatPlanNothingIgnoreAnnouncements) {
  // DCTCP gets the same announcements and does nothing with them.
  ComputeGraph g;
  const int a = g.add_op(0, 100 * kPsPerUs, "A");
  const int b = g.add_op(1, 100 * kPsPerUs, "B");
  g.add_transfer(a, b, kActivationBytes);
  ExperimentConfig config = testing::star(2);
  config.transport = "dctcp";
  config.workloads.add(std::move(g));
  Experiment e(config);
  e.run();
  EXPECT_EQ(e.transport().stats().scheduling_packets, 0u);
}

}  // namespace
}  // namespace safs
