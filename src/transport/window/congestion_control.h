// Congestion control for the window-based transports: one sender mechanism
// (window_transport.cc: slow start, congestion avoidance, NewReno recovery) with
// the response to ECN echoes as the variation point.
//   Reno:  not ECN-capable; reacts to loss only.
//   DCTCP: RFC 8257; cwnd <- cwnd * (1 - alpha/2) once per window of marks.
// D2TCP will derive from DCTCP and change only the penalty exponent.
#pragma once

#include <cstdint>

#include "base/time.h"

namespace safs {

// DCTCP alpha in Linux's fixed point: 1024 = 1.0 (net/ipv4/tcp_dctcp.c).
inline constexpr std::uint32_t kAlphaOne = 1024;

struct CcState {
  std::uint64_t cwnd_bytes = 0;
  std::uint64_t ssthresh_bytes = 0;
  std::uint64_t ca_acked_bytes = 0;  // congestion-avoidance byte counter
  // DCTCP's per-window mark accounting.
  std::uint32_t alpha = kAlphaOne;
  std::uint64_t window_end_seq = 0;  // alpha is updated when snd_una passes this
  std::uint64_t window_acked_bytes = 0;
  std::uint64_t window_ce_bytes = 0;
};

// What the ECN response may look at (D2TCP needs the deadline and progress).
struct FlowProgress {
  std::uint64_t remaining_bytes;
  TimePs deadline_ps;  // kTimeNever: none
  TimePs now_ps;
  TimePs srtt_ps;
};

class CongestionControl {
 public:
  virtual ~CongestionControl() = default;
  virtual bool ecn_capable() const = 0;
  // Per ACK that advances snd_una (DCTCP's alpha bookkeeping).
  virtual void on_ack(CcState& cc, std::uint64_t acked_bytes, bool ece, std::uint64_t snd_una,
                      std::uint64_t snd_nxt) const = 0;
  // The window after an ECN echo (applied at most once per window).
  virtual std::uint64_t cwnd_after_echo(const CcState& cc, const FlowProgress& flow) const = 0;
};

class RenoControl final : public CongestionControl {
 public:
  bool ecn_capable() const override { return false; }
  void on_ack(CcState&, std::uint64_t, bool, std::uint64_t, std::uint64_t) const override {}
  std::uint64_t cwnd_after_echo(const CcState& cc, const FlowProgress&) const override {
    return cc.cwnd_bytes;
  }
};

class DctcpControl : public CongestionControl {
 public:
  // min_cwnd_bytes: the floor after a cut (Linux: two packets).
  DctcpControl(unsigned shift_g, std::uint32_t min_cwnd_bytes)
      : shift_g_(shift_g), min_cwnd_bytes_(min_cwnd_bytes) {}

  bool ecn_capable() const override { return true; }
  void on_ack(CcState& cc, std::uint64_t acked_bytes, bool ece, std::uint64_t snd_una,
              std::uint64_t snd_nxt) const override;
  std::uint64_t cwnd_after_echo(const CcState& cc, const FlowProgress& flow) const override;

 protected:
  // The fraction p (fixed point, kAlphaOne = 1) in cwnd * (1 - p/2).
  virtual std::uint32_t penalty(const CcState& cc, const FlowProgress& /*flow*/) const {
    return cc.alpha;
  }

 private:
  unsigned shift_g_;
  std::uint32_t min_cwnd_bytes_;
};

// D2TCP (Vamanan et al., SIGCOMM 2012; background.md §2): DCTCP's alpha
// unchanged, but the cut uses p = alpha^d with the deadline imminence
// d = Tc / D, clamped to [d_min, d_max]: Tc = B / (3/4 W) RTTs is the time
// the flow needs at its mean window, D the time left to its deadline. A flow
// past its deadline uses d_max (and keeps sending); one without a deadline
// uses d = 1, which is DCTCP.
class D2tcpControl final : public DctcpControl {
 public:
  D2tcpControl(unsigned shift_g, std::uint32_t min_cwnd_bytes, double d_min, double d_max)
      : DctcpControl(shift_g, min_cwnd_bytes), d_min_(d_min), d_max_(d_max) {}

  // The deadline imminence factor d for this flow now.
  double imminence(const CcState& cc, const FlowProgress& flow) const;

 protected:
  std::uint32_t penalty(const CcState& cc, const FlowProgress& flow) const override;

 private:
  double d_min_;
  double d_max_;
};

}  // namespace safs
