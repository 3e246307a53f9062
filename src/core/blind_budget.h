// What a sender may send to one receiver before any grant, learned from its
// own losses there. Blind bytes are the one part of SAFS traffic no receiver
// schedules: when many senders start at once into one downlink (an FFN
// host's 16-way dispatch), their blind bytes together can exceed the port's
// buffer, and a tail lost in a blind burst costs a retransmission timeout.
// The receiver cannot warn a sender before the burst; the sender can learn
// from the last one, as Linux keeps per-destination state (tcp_metrics)
// across connections.
//
// Multiplicative decrease, slow additive increase: a blind loss on a flow to
// the receiver caps its later flows' blind bytes at half what that flow sent
// blind; every loss-free `growth_interval` adds one packet back. The cap
// starts absent, so a sender that never loses blind bytes is never capped.
#pragma once

#include <cstdint>
#include <limits>

#include "core/types.h"

namespace safs::core {

struct BlindBudgetOptions {
  // TCP's multiplicative decrease (RFC 5681, section 3.1).
  double decrease_factor = 0.5;
  // One packet of blind budget back per this much time without a blind loss
  // to the receiver. Slow on purpose: the cap stands for the receiver's
  // buffer share in a burst that recurs (an incast every layer), and probing
  // faster brings the losses back (measured on afd-shallow: docs/safs.md).
  // 0: the cap never grows back.
  TimePs growth_interval_ps = 100 * kPsPerMs;
  // The growth step and the floor: one full packet's payload (Ethernet's
  // 1500 B unless the caller knows its MTU). Never below one packet: a flow
  // always sends something that announces it to its receiver.
  std::uint64_t packet_bytes = 1500;
};

class BlindBudget {
 public:
  static constexpr std::uint64_t kNoCap = std::numeric_limits<std::uint64_t>::max();

  // The most a flow starting now may send blind (kNoCap: no loss seen yet).
  std::uint64_t cap_bytes(const BlindBudgetOptions& options, TimePs now) const;
  // A flow that sent `blind_bytes` blind lost some of them. Call once per flow.
  void on_blind_loss(const BlindBudgetOptions& options, std::uint64_t blind_bytes, TimePs now);
  bool capped() const { return capped_; }

 private:
  bool capped_ = false;
  double cap_at_loss_bytes_ = 0;  // the cap set by the last loss
  TimePs last_loss_ps_ = 0;
};

}  // namespace safs::core
