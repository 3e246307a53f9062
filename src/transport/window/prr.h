// Proportional Rate Reduction (RFC 6937), as Linux's tcp_cwnd_reduction()
// computes it (PRR-SSRB): while the window comes down to ssthresh, after an
// ECN echo or a loss, the sender sends in proportion to what the receiver
// reports delivered, so the window falls over one round instead of at once
// and the ACK clock keeps running. Bytes where Linux counts packets.
#pragma once

#include <cstdint>

namespace safs {

struct PrrState {
  std::uint64_t prior_cwnd_bytes = 0;  // the window when the reduction began
  std::uint64_t delivered_bytes = 0;   // newly delivered since then (prr_delivered)
  std::uint64_t out_bytes = 0;         // sent since then (prr_out)
};

// A reduction begins with the window at cwnd_bytes.
inline void prr_start(PrrState& prr, std::uint64_t cwnd_bytes) { prr = {cwnd_bytes, 0, 0}; }

// The window after an ACK that reports delivered_bytes newly delivered, with
// pipe_bytes in the network after it. una_advanced: the ACK moved snd_una and
// marked nothing newly lost (the slow-start bonus of one segment).
std::uint64_t prr_cwnd(PrrState& prr, std::uint64_t cwnd_bytes, std::uint64_t pipe_bytes,
                       std::uint64_t ssthresh_bytes, std::uint64_t delivered_bytes,
                       bool una_advanced, std::uint32_t mss_bytes);

}  // namespace safs
