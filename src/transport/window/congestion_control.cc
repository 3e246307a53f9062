#include "transport/window/congestion_control.h"

#include <algorithm>
#include <cmath>

namespace safs {

// Linux dctcp_update_alpha(): once per window of data, fold the fraction of
// CE-marked bytes into alpha with gain g = 2^-shift_g. As in Linux, the
// window ends before this ACK's bytes are counted (in_ack_event runs before
// tcp_clean_rtx_queue counts them), so they open the next window, and the
// update comes before the cut an echo on this ACK makes. The subtraction uses
// min_not_zero so alpha can decay all the way to 0 (Linux commit "allow dctcp
// alpha to drop to zero").
void DctcpControl::on_ack(CcState& cc, std::uint64_t acked_bytes, bool ece, std::uint64_t snd_una,
                          std::uint64_t snd_nxt) const {
  if (snd_una >= cc.window_end_seq) {
    std::uint32_t decay = cc.alpha >> shift_g_;
    if (decay == 0) decay = cc.alpha;  // min_not_zero(alpha, alpha >> g)
    cc.alpha -= std::min(cc.alpha, decay);
    if (cc.window_ce_bytes > 0) {
      const std::uint64_t delivered = std::max<std::uint64_t>(1, cc.window_acked_bytes);
      const std::uint64_t add = (cc.window_ce_bytes << (10 - shift_g_)) / delivered;
      cc.alpha = static_cast<std::uint32_t>(std::min<std::uint64_t>(cc.alpha + add, kAlphaOne));
    }
    cc.window_acked_bytes = 0;
    cc.window_ce_bytes = 0;
    cc.window_end_seq = snd_nxt;
  }
  cc.window_acked_bytes += acked_bytes;
  if (ece) cc.window_ce_bytes += acked_bytes;
}

// Linux dctcp_ssthresh(): cwnd - cwnd * alpha / 2, at least two packets.
std::uint64_t DctcpControl::cwnd_after_echo(const CcState& cc, const FlowProgress& flow) const {
  const std::uint64_t p = penalty(cc, flow);
  const std::uint64_t reduced = cc.cwnd_bytes - ((cc.cwnd_bytes * p) >> 11);
  return std::max<std::uint64_t>(reduced, min_cwnd_bytes_);
}

double D2tcpControl::imminence(const CcState& cc, const FlowProgress& flow) const {
  if (flow.deadline_ps == kTimeNever) return 1.0;
  const TimePs time_left = flow.deadline_ps - flow.now_ps;
  if (time_left <= 0) return d_max_;
  // Tc in picoseconds: remaining bytes over the mean window (3/4 of cwnd)
  // per RTT. Guard the zero window and a missing RTT sample.
  const double window = 0.75 * static_cast<double>(std::max<std::uint64_t>(cc.cwnd_bytes, 1));
  const double rtt_ps = static_cast<double>(std::max<TimePs>(flow.srtt_ps, 1));
  const double needed_ps = static_cast<double>(flow.remaining_bytes) / window * rtt_ps;
  return std::clamp(needed_ps / static_cast<double>(time_left), d_min_, d_max_);
}

// p = alpha^d, in the same fixed point as alpha. alpha and p stay separate
// variables (a public port overwrote alpha with alpha^d; background.md §2).
std::uint32_t D2tcpControl::penalty(const CcState& cc, const FlowProgress& flow) const {
  const double alpha = static_cast<double>(cc.alpha) / kAlphaOne;
  const double p = std::pow(alpha, imminence(cc, flow));
  return static_cast<std::uint32_t>(std::lround(p * kAlphaOne));
}

}  // namespace safs
