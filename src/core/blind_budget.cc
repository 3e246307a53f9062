#include "core/blind_budget.h"

#include <algorithm>

namespace safs::core {

std::uint64_t BlindBudget::cap_bytes(const BlindBudgetOptions& options, TimePs now) const {
  if (!capped_) return kNoCap;
  const double intervals = options.growth_interval_ps == 0
                               ? 0.0  // never grows back
                               : static_cast<double>(now - last_loss_ps_) /
                                     static_cast<double>(options.growth_interval_ps);
  const double cap = cap_at_loss_bytes_ + intervals * static_cast<double>(options.packet_bytes);
  if (cap >= static_cast<double>(kNoCap)) return kNoCap;
  return static_cast<std::uint64_t>(cap);
}

void BlindBudget::on_blind_loss(const BlindBudgetOptions& options, std::uint64_t blind_bytes,
                                TimePs now) {
  // Halve what was sent, or the cap in force, whichever is less: a flow that
  // started before the last loss must not raise the cap it set.
  const std::uint64_t in_force = std::min(blind_bytes, cap_bytes(options, now));
  cap_at_loss_bytes_ = std::max(static_cast<double>(options.packet_bytes),
                                options.decrease_factor * static_cast<double>(in_force));
  last_loss_ps_ = now;
  capped_ = true;
}

}  // namespace safs::core
