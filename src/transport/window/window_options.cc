#include "transport/window/window_options.h"

namespace safs {

KnobTable<WindowConfig> reno_knobs() {
  KnobTable<WindowConfig> t;
  t.integer("initial_cwnd_packets", "packets", SAFS_FIELD(initial_cwnd_packets), 1, 1e6,
            "Initial window (RFC 6928).");
  t.time("rto_min_us", "us", kPsPerUs, SAFS_FIELD(rto_min_ps), 1, 1e7,
         "Minimum retransmission timeout. Datacenter-tuned (Vasudevan et al., SIGCOMM 2009, "
         "show sub-millisecond RTOs are safe); Linux's 200 ms would dwarf every FCT here.");
  t.time("rto_max_us", "us", kPsPerUs, SAFS_FIELD(rto_max_ps), 1, 1e8,
         "Cap on the backed-off timeout.");
  t.integer("dupack_threshold", "ACKs", SAFS_FIELD(dupack_threshold), 1, 1000,
            "Duplicate ACKs that trigger fast retransmit (RFC 5681).");
  t.flag("prr", SAFS_FIELD(prr),
         "Proportional Rate Reduction (RFC 6937, PRR-SSRB as Linux tcp_cwnd_reduction): after an "
         "ECN echo or a loss the window comes down to ssthresh over one round, sending as ACKs "
         "report data delivered, with duplicate ACKs counted out of the pipe as Linux does "
         "without SACK. false: the ECN cut at once and NewReno's window inflation (RFC 6582).");
  t.flag("impatient_rto", SAFS_FIELD(impatient_rto),
         "In fast recovery the retransmission timer is re-armed on the first partial ACK only "
         "(RFC 6582 section 4, the impatient variant; Linux). false: on every partial ACK.");
  t.flag("loss_state", SAFS_FIELD(loss_state),
         "After a timeout, until everything then outstanding is acknowledged (Linux "
         "TCP_CA_Loss), ECN echoes do not cut the window. false: they may, raising a window of "
         "one segment to DCTCP's floor. Fast recovery waits either way (RFC 6582).");
  t.integer("urgent_priority", "level", SAFS_FIELD(urgent_priority), 0, 7,
            "Priority (0-7, strict, higher first) of urgent flows' data and ACKs at switch "
            "ports and at the sending NIC: the static priority class a datacenter would "
            "configure for latency-critical traffic, above background at 0. 0 = one class for "
            "every flow, as plain TCP. Under SAFS a grant's priority replaces it for data.");
  t.flag("sack", SAFS_FIELD(sack),
         "SACK (RFC 2018) and SACK-based loss recovery (RFC 6675): each ACK reports the segment "
         "that triggered it, a hole with dupack_threshold SACKed segments above it is lost and "
         "resent first, and the pipe leaves out what was SACKed; after a timeout what was SACKed "
         "stays. On, as Linux. false: NewReno, one hole resent per partial ACK (RFC 6582), "
         "going back N after a timeout.");
  t.flag("tail_loss_probe", SAFS_FIELD(tail_loss_probe),
         "Tail loss probes (RFC 8985 section 7, with SACK only): outside recovery (open, or an "
         "ECN cut under way, as Linux), 2 smoothed RTTs after the last new data or ACK with "
         "data still unacknowledged (at most the RTO), the highest segment not SACKed is resent "
         "once; when it arrives, every segment below it not SACKed is lost and recovery starts "
         "(RACK's inference). A lost tail then costs about three RTTs instead of a timeout. The "
         "receiver ACKs every segment, so there is no delayed-ACK term. Off by default: Linux "
         "adds 2 jiffies (TCP_TIMEOUT_MIN, 2 ms at HZ = 1000) to the 2 RTTs, so with a 1 ms "
         "rto_min_us its timeout fires first; on, this models a stack with microsecond timers.");
  return t;
}

KnobTable<DctcpOptions> dctcp_knobs() {
  KnobTable<DctcpOptions> t;
  t.include(reno_knobs(), SAFS_FIELD(window));
  t.integer("shift_g", "", SAFS_FIELD(shift_g), 0, 10,
            "Alpha gain g = 2^-shift_g; 4 gives g = 1/16 (RFC 8257, Linux dctcp_shift_g).");
  t.scaled("initial_alpha", "", kAlphaOne, SAFS_FIELD(window.initial_alpha), 0, 1,
           "Alpha before the first window (Linux dctcp_alpha_on_init = 1024/1024).");
  return t;
}

KnobTable<D2tcpOptions> d2tcp_knobs() {
  KnobTable<D2tcpOptions> t;
  t.include(dctcp_knobs(), SAFS_FIELD(dctcp));
  t.number("d_min", "", SAFS_FIELD(d_min), 0.01, 1,
           "Lower clamp of the deadline imminence d = Tc / D (D2TCP paper, SIGCOMM 2012).");
  t.number("d_max", "", SAFS_FIELD(d_max), 1, 100,
           "Upper clamp of d; also used once the deadline has passed (D2TCP paper).");
  return t;
}

KnobTable<DctcpOptions> dctcp_prio_knobs() {
  return dctcp_knobs().with_defaults(
      [](DctcpOptions& o) { o.window.urgent_priority = kUrgentClassPriority; });
}

KnobTable<D2tcpOptions> d2tcp_prio_knobs() {
  return d2tcp_knobs().with_defaults(
      [](D2tcpOptions& o) { o.dctcp.window.urgent_priority = kUrgentClassPriority; });
}

}  // namespace safs
