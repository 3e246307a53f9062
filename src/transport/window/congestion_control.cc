#include "transport/window/congestion_control.h"

#include <algorithm>

namespace safs {

// Linux dctcp_update_alpha(): once per window of data, fold the fraction of
// CE-marked bytes into alpha with gain g = 2^-shift_g. The subtraction uses
// min_not_zero so alpha can decay all the way to 0 (Linux commit "allow dctcp
// alpha to drop to zero").
void DctcpControl::on_ack(CcState& cc, std::uint64_t acked_bytes, bool ece, std::uint64_t snd_una,
                          std::uint64_t snd_nxt) const {
  cc.window_acked_bytes += acked_bytes;
  if (ece) cc.window_ce_bytes += acked_bytes;
  if (snd_una < cc.window_end_seq) return;

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

// Linux dctcp_ssthresh(): cwnd - cwnd * alpha / 2, at least two packets.
std::uint64_t DctcpControl::cwnd_after_echo(const CcState& cc, const FlowProgress& flow) const {
  const std::uint64_t p = penalty(cc, flow);
  const std::uint64_t reduced = cc.cwnd_bytes - ((cc.cwnd_bytes * p) >> 11);
  return std::max<std::uint64_t>(reduced, min_cwnd_bytes_);
}

}  // namespace safs
