#include "transport/window/prr.h"

#include <algorithm>

namespace safs {

std::uint64_t prr_cwnd(PrrState& prr, std::uint64_t cwnd_bytes, std::uint64_t pipe_bytes,
                       std::uint64_t ssthresh_bytes, std::uint64_t delivered_bytes,
                       bool una_advanced, std::uint32_t mss_bytes) {
  if (delivered_bytes == 0 || prr.prior_cwnd_bytes == 0) return cwnd_bytes;
  prr.delivered_bytes += delivered_bytes;
  const auto out = static_cast<std::int64_t>(prr.out_bytes);
  std::int64_t send_bytes = 0;
  if (pipe_bytes > ssthresh_bytes) {
    // Above ssthresh: send ssthresh / prior_cwnd of what was delivered. Both
    // factors are bytes of one round, far below 2^32, so the product fits.
    const std::uint64_t quota =
        (ssthresh_bytes * prr.delivered_bytes + prr.prior_cwnd_bytes - 1) / prr.prior_cwnd_bytes;
    send_bytes = static_cast<std::int64_t>(quota) - out;
  } else {
    // At or below ssthresh: slow-start back up to it, at most what was
    // delivered plus one segment per ACK (the SSRB bound).
    send_bytes = std::max(static_cast<std::int64_t>(prr.delivered_bytes) - out,
                          static_cast<std::int64_t>(delivered_bytes));
    if (una_advanced) send_bytes += mss_bytes;
    send_bytes = std::min(static_cast<std::int64_t>(ssthresh_bytes - pipe_bytes), send_bytes);
  }
  // The first ACK of a reduction always lets one segment out (the fast
  // retransmit, when it is a loss).
  if (prr.out_bytes == 0) send_bytes = std::max<std::int64_t>(send_bytes, mss_bytes);
  if (send_bytes <= 0) return pipe_bytes;
  // Whole segments, as Linux counts: a fraction of one still sends one, or
  // the last ACKs of a round could leave the window just short of a segment.
  const std::uint64_t segments =
      (static_cast<std::uint64_t>(send_bytes) + mss_bytes - 1) / mss_bytes;
  return pipe_bytes + segments * mss_bytes;
}

}  // namespace safs
