#include "transport/homa/homa_options.h"

namespace safs {

KnobTable<HomaConfig> homa_knobs() {
  KnobTable<HomaConfig> t;
  t.integer(
      "rtt_bytes", "bytes", SAFS_FIELD(rtt_bytes), 0, 1e9,
      "RTTbytes: unscheduled bytes, per-message grant window and unit of max_incoming. 0 = "
      "derived: what the host link carries while a full data packet crosses the longest "
      "host-to-host path and a grant comes back (the module's definition), in whole packets: "
      "61 440 B on a 100 Gbit/s star with 1 us links and 4096-B packets. The module fixes "
      "10 000 B (2019) to 40 000 B (now) at 25 Gbit/s including software delay; HomaSimulation "
      "9 700 B at 10 Gbit/s.");
  t.integer("unsched_bytes", "bytes", SAFS_FIELD(unsched_bytes), 0, 1e9,
            "Bytes sent before any grant, rounded up to whole packets. 0 = rtt_bytes (paper; "
            "newer modules set unsched_bytes separately).");
  t.integer("overcommitment", "messages", SAFS_FIELD(overcommitment), 1, 1024,
            "Degree of overcommitment: messages granted at once, at most one per sender "
            "(module max_overcommit = 8; the RFC draft suggests 4-8).");
  t.integer("grant_window_bytes", "bytes", SAFS_FIELD(grant_window_bytes), 0, 1e9,
            "Granted-but-not-received bytes each active message may have. 0 = rtt_bytes (paper "
            "and module protocol.md: keep rtt_bytes outstanding per message); the module's "
            "fixed window_param was 100 000 B in some versions.");
  t.flag("dynamic_window", SAFS_FIELD(dynamic_window),
         "true: window = max_incoming / (active messages + 1) instead (module homa_grant.c, "
         "window_param = 0).");
  t.integer("max_incoming_bytes", "bytes", SAFS_FIELD(max_incoming_bytes), 0, 1e10,
            "Budget of granted plus unscheduled bytes not yet received per receiver; no grant "
            "is sent beyond it. 0 = overcommitment x rtt_bytes (module protocol.md; "
            "homa_utils.c sets 400 000 B in newer versions).");
  t.integer("unsched_levels", "levels", SAFS_FIELD(unsched_levels), 1, 4,
            "Priority levels for unscheduled data, from 7 down; scheduled data uses the rest, "
            "0 .. 7 - unsched_levels (module: max_sched_prio = 3).");
  t.integer("unsched_cutoff_7_bytes", "bytes", SAFS_FIELD(unsched_cutoffs[0]), 0, 1e12,
            "Messages up to this length send their unscheduled bytes at level 7 (module "
            "unsched_cutoffs[7] = 200). Cutoffs are message lengths, independent of the MTU.");
  t.integer("unsched_cutoff_6_bytes", "bytes", SAFS_FIELD(unsched_cutoffs[1]), 0, 1e12,
            "Level 6 up to this length (module unsched_cutoffs[6] = 2800).");
  t.integer("unsched_cutoff_5_bytes", "bytes", SAFS_FIELD(unsched_cutoffs[2]), 0, 1e12,
            "Level 5 up to this length (module unsched_cutoffs[5] = 15 000); longer messages "
            "use the lowest unscheduled level (4).");
  t.number("grant_fifo_fraction", "", SAFS_FIELD(grant_fifo_fraction), 0, 0.5,
           "Fraction of granted bytes given to the oldest message against SRPT starvation "
           "(module grant_fifo_fraction = 50 per mille, capped at 500).");
  t.integer("fifo_grant_increment_bytes", "bytes", SAFS_FIELD(fifo_grant_increment), 1, 1e9,
            "Bytes per FIFO (\"pity\") grant (module fifo_grant_increment = 10 000).");
  t.time("resend_after_us", "us", kPsPerUs, SAFS_FIELD(resend_after_ps), 0.1, 1e7,
         "Silence (no packet of the message) after which a receiver expecting data sends "
         "RESENDs. Module: resend_ticks = 5 ticks of 1 ms, a kernel-timer granularity hundreds "
         "of RTTs long. Scaled here to the criterion behind it, that a RESEND means loss rather "
         "than queueing: longer than the worst queueing on the longest path here, 5 switch "
         "ports (fat-tree) x 80 us (a full 1 MB port buffer at 100 Gbit/s) = 400 us. 100 us "
         "sent spurious RESENDs under fabric queueing (1% duplicate traffic, which itself "
         "caused drops).");
  t.time("resend_interval_us", "us", kPsPerUs, SAFS_FIELD(resend_interval_ps), 0.1, 1e7,
         "Between further RESENDs while the message stays silent (module resend_interval = 5 "
         "ticks, the same as resend_ticks; scaled as resend_after_us).");
  t.time("resend_max_wait_us", "us", kPsPerUs, SAFS_FIELD(resend_max_wait_ps), 0.1, 1e8,
         "Longest silence a receiver attributes to strict-priority queueing (it keeps getting "
         "DATA at higher levels than the missing bytes were granted at) before it asks anyway. "
         "Such silence is treated as the module treats all silence: resend_ticks = 5 ticks of "
         "1 ms (ours: the split between explained and unexplained silence).");
  t.time("sender_probe_us", "us", kPsPerUs, SAFS_FIELD(sender_probe_ps), 0.1, 1e7,
         "Silence after which a sender that may send nothing more asks the receiver (the "
         "module server's NEED_ACK); an unknown message is then resent from byte 0 (module "
         "UNKNOWN). Twice resend_after_us, so the receiver, which knows the gaps, normally acts "
         "first (ours).");
  return t;
}

}  // namespace safs
