// Reusable rate grants: a receiver tells a sender "send this flow at this
// rate, at this priority, for this long, at most this many bytes". A grant is
// a lease: the sender reuses it until it expires or runs out of bytes, and the
// receiver re-sends only when the rate changes enough, the lease nears its
// end, or flows come and go. So control traffic scales with changes, not with
// bytes.
#pragma once

#include <cstdint>

#include "core/types.h"

namespace safs::core {

struct Grant {
  FlowId flow = 0;
  double rate_bps = 0;
  std::uint8_t priority = 0;
  std::uint32_t epoch = 0;     // per flow, increasing; older epochs are discarded
  TimePs valid_for_ps = 0;     // relative: the lease starts when the sender receives it
  std::uint64_t byte_cap = 0;  // at most this many bytes under this grant
};

// The sender's copy of a flow's current grant.
class GrantHolder {
 public:
  // Takes `grant` if it is newer than the one held. Returns false for a stale
  // or reordered grant, which changes nothing.
  bool accept(const Grant& grant, TimePs now) {
    if (held_ && grant.epoch <= grant_.epoch) return false;
    grant_ = grant;
    held_ = true;
    expires_ps_ = now + grant.valid_for_ps;
    bytes_sent_ = 0;
    return true;
  }
  // The lease is valid and has bytes left. Otherwise the sender falls back to
  // background behaviour (congestion window only, lowest priority).
  bool active(TimePs now) const {
    return held_ && now < expires_ps_ && bytes_sent_ < grant_.byte_cap;
  }
  void on_sent(std::uint64_t bytes) { bytes_sent_ += bytes; }

  bool held() const { return held_; }
  const Grant& grant() const { return grant_; }
  TimePs expires_ps() const { return expires_ps_; }

 private:
  Grant grant_;
  bool held_ = false;
  TimePs expires_ps_ = 0;
  std::uint64_t bytes_sent_ = 0;
};

}  // namespace safs::core
