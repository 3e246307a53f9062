#include "transport/pfabric/pfabric_options.h"

namespace safs {

KnobTable<PFabricConfig> pfabric_knobs() {
  KnobTable<PFabricConfig> t;
  t.integer("buffer_bytes", "bytes", SAFS_FIELD(switch_buffer_bytes), 0, 1e12,
            "Buffer of every switch port, replacing network.port_buffer_bytes (0 keeps that). "
            "About 2 x BDP (pFabric paper: 36 KB at 10 Gbit/s): 2 x 100 Gbit/s x 9.36 us, the "
            "unloaded RTT of a 4096-B packet and its ACK across a leaf-spine with 1 us links "
            "(4 hops each way). On a single switch (RTT 4.7 us) 2 x BDP is 117000.");
  t.integer("initial_window_packets", "packets", SAFS_FIELD(initial_window_packets), 0, 1e6,
            "Initial window; flows start at line rate. 0 = one BDP of the flow's path "
            "(bottleneck rate x unloaded RTT, rounded up to whole packets), as the paper's "
            "IW = BDP (12 packets at 10 Gbit/s).");
  t.integer("max_window_packets", "packets", SAFS_FIELD(max_window_packets), 0, 1e6,
            "Cap on the window. 0 = two path BDPs less one packet: the pFabric ns-2 scripts "
            "cap maxcwnd_ at the queue size (2 x BDP) less one packet.");
  t.time("rto_us", "us", kPsPerUs, SAFS_FIELD(rto_ps), 0, 1e7,
         "Retransmission timeout, fixed (no backoff). 0 = the flow's unloaded path RTT plus "
         "the time to drain one full switch buffer (buffer_bytes) at the path's bottleneck "
         "rate, at least 3 x the RTT: with 2-BDP buffers that is the paper's ~3 x RTT (45 us "
         "at 10 Gbit/s). With the default buffer at 100 Gbit/s and 1 us links: 23 us within "
         "one switch, 27 us across a leaf-spine (1500-B MTU).");
  t.integer("probe_after_timeouts", "timeouts", SAFS_FIELD(probe_after_timeouts), 1, 1000,
            "Consecutive timeouts after which a flow enters probe mode: one minimum-size probe "
            "per RTT until an ACK arrives (paper; ns-2 prob_cap_ = 5).");
  t.choice("rank", SAFS_FIELD(rank),
           std::vector<std::pair<std::string, PFabricRank>>{
               {"remaining", PFabricRank::kRemainingSize}, {"deadline", PFabricRank::kDeadline}},
           "What every packet carries as its priority, smaller served first and dropped last, "
           "and what orders a sender's flows: \"remaining\", the flow's unacknowledged bytes "
           "(SRPT, the paper's choice); \"deadline\", its deadline, earliest first (EDF, which "
           "the paper names for deadline traffic), flows without one after every deadline "
           "flow by remaining bytes.");
  return t;
}

KnobTable<PFabricConfig> pfabric_edf_knobs() {
  return pfabric_knobs().with_defaults([](PFabricConfig& c) { c.rank = PFabricRank::kDeadline; });
}

}  // namespace safs
