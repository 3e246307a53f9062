#include "scenario/sections.h"

namespace safs {

KnobTable<ExperimentConfig> simulation_knobs() {
  KnobTable<ExperimentConfig> t;
  t.integer("seed", "", SAFS_FIELD(seed), 0, 9.2e18,
            "Run seed. Every random stream (loss, ECMP salt, workloads) derives from it and a "
            "stable stream name, so adding a component never shifts another one's draws.");
  t.time("stop_ms", "ms", kPsPerMs, SAFS_FIELD(stop_ps), 1e-6, 1e9,
         "Safety limit on simulated time; flows unfinished by then are reported incomplete.");
  return t;
}

KnobTable<TopologyOptions> topology_knobs() {
  KnobTable<TopologyOptions> t;
  t.choice(
      "kind", SAFS_FIELD(spec.kind),
      std::vector<std::pair<std::string, TopologyKind>>{{"star", TopologyKind::kStar},
                                                        {"leaf_spine", TopologyKind::kLeafSpine},
                                                        {"fat_tree", TopologyKind::kFatTree}},
      "star: every host on one switch. leaf_spine: two tiers, every leaf linked to every "
      "spine. fat_tree: three tiers of radix k (Al-Fares et al., SIGCOMM 2008).");
  t.integer("hosts", "hosts", SAFS_FIELD(spec.hosts), 2, 65535, "star: number of hosts.");
  t.integer("hosts_per_leaf", "hosts", SAFS_FIELD(spec.hosts_per_leaf), 1, 65535,
            "leaf_spine: hosts under each leaf.");
  t.integer("leaves", "switches", SAFS_FIELD(spec.leaves), 1, 4096, "leaf_spine: leaf switches.");
  t.integer("spines", "switches", SAFS_FIELD(spec.spines), 1, 4096, "leaf_spine: spine switches.");
  t.number("oversubscription", "ratio", SAFS_FIELD(oversubscription), 0.01, 1000,
           "leaf_spine: host capacity over uplink capacity per leaf; sets the leaf-spine link "
           "rate to hosts_per_leaf * link_gbps / (spines * oversubscription) unless "
           "fabric_link_gbps is given.");
  t.integer("k", "ports", SAFS_FIELD(spec.fat_tree_k), 2, 128,
            "fat_tree: switch radix k (even); k^3/4 hosts, 5k^2/4 switches.");
  t.scaled("link_gbps", "Gbit/s", 1e9, SAFS_FIELD(spec.host_link.rate_bps), 1e-6, 1e6,
           "Host link rate.");
  t.number("fabric_link_gbps", "Gbit/s", SAFS_FIELD(fabric_link_gbps), 1e-6, 1e6,
           "Switch-to-switch link rate. Default: link_gbps (fat_tree), or derived from "
           "oversubscription (leaf_spine).");
  t.time("link_delay_us", "us", kPsPerUs, SAFS_FIELD(spec.host_link.delay_ps), 0, 1e6,
         "Propagation delay of every link.");
  return t;
}

KnobTable<ExperimentConfig> network_knobs() {
  KnobTable<ExperimentConfig> t;
  t.integer("mtu_bytes", "bytes", SAFS_FIELD(mtu_bytes), 64, 1'000'000,
            "Payload bytes per full packet (the segment size).");
  t.integer("header_bytes", "bytes", SAFS_FIELD(header_bytes), 0, 65535,
            "Wire overhead per packet, also the size of a bare ACK: IPv4 20 + TCP 20 + "
            "Ethernet 14 + FCS 4 + preamble 8 + inter-frame gap 12.");
  t.integer("port_buffer_bytes", "bytes", SAFS_FIELD(network.switches.port_buffer_bytes), 1, 1e15,
            "Buffer of each switch egress port (drop-tail beyond it).");
  t.integer("shared_buffer_bytes", "bytes", SAFS_FIELD(network.switches.shared_buffer_bytes), 0,
            1e15,
            "Buffer shared by all ports of a switch; 0 = none. A packet needs room in its "
            "port's buffer and in the shared one.");
  t.integer("ecn_threshold_bytes", "bytes", SAFS_FIELD(network.switches.ecn_threshold_bytes), 0,
            1e15,
            "DCTCP marking threshold K on the instantaneous queue of a switch port: 65 packets "
            "of 1500 B, the Linux dctcp.txt guidance, well above the DCTCP paper's bound "
            "C*RTT/7 (about 9 KB at 100 Gbit/s and a 5 us RTT).");
  t.number("link_loss_rate", "probability", SAFS_FIELD(network.link_loss_rate), 0, 1,
           "Random loss injected on every link, each with its own random stream.");
  return t;
}

// docs/imperfect-semantics.md describes both models.
KnobTable<ExperimentConfig> timestamp_knobs() {
  KnobTable<ExperimentConfig> t;
  t.number("bias_of_slack", "slacks", SAFS_FIELD(timestamps.bias_of_slack), -1, 10,
           "Systematic error of every no-bubble timestamp the transport sees, in units of the "
           "flow's slack (true deadline - now - ideal FCT, at least 0): +1 tells it one slack "
           "later than the truth, -0.5 half a slack earlier. Never earlier than now. Flows' "
           "records (misses, lateness) keep the true deadline.");
  t.number("noise_of_slack", "slacks", SAFS_FIELD(timestamps.noise_of_slack), 0, 10,
           "Standard deviation of a normal error added to each timestamp, in slacks; drawn "
           "afresh for every timestamp.");
  t.time("update_delay_us", "us", kPsPerUs, SAFS_FIELD(timestamps.update_delay_ps), 0, 1e9,
         "Delay before a timestamp update reaches the transport (a flow's first timestamp "
         "travels with it).");
  t.number("update_drop_probability", "probability", SAFS_FIELD(timestamps.update_drop_probability),
           0, 1, "Probability that a timestamp update never reaches the transport.");
  t.number("missing_fraction", "fraction", SAFS_FIELD(timestamps.missing_fraction), 0, 1,
           "Share of the flows with a deadline that reach the transport without one, and get no "
           "updates; they keep their class (urgent stays urgent).");
  t.flag("waiting_updates", SAFS_FIELD(timestamps.waiting_updates),
         "With imperfect timestamps: when a compute op's GPU idles waiting for an input flow "
         "at or past the op's no-bubble timestamp, the transport is told that flow's timestamp "
         "is now (the runtime sees the blocked receive), unless it was told no later already. "
         "Exact, as a waiting consumer has no slack; still dropped or delayed like any update. "
         "false: never told.");
  return t;
}

KnobTable<ExperimentConfig> jitter_knobs() {
  KnobTable<ExperimentConfig> t;
  t.number("sigma", "", SAFS_FIELD(op_jitter.sigma), 0, 3,
           "Every compute op (pipeline, inference) really takes its planned duration x "
           "exp(mu + sigma Z), Z standard normal, mu = -sigma^2/2 so the mean is the plan. "
           "No-bubble timestamps use the planned durations until ops end.");
  t.integer("straggler_every", "ops", SAFS_FIELD(op_jitter.straggler_every), 0, 1e9,
            "Each op is a straggler with probability 1/this; 0 = none.");
  t.number("straggler_factor", "x", SAFS_FIELD(op_jitter.straggler_factor), 1, 1000,
           "A straggler's duration over its jittered one.");
  return t;
}

}  // namespace safs
