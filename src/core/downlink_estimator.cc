#include "core/downlink_estimator.h"

#include <algorithm>
#include <stdexcept>

namespace safs::core {

DownlinkEstimator::DownlinkEstimator(double link_bps, const DownlinkEstimatorConfig& config)
    : config_(config), link_bps_(link_bps), budget_bps_(link_bps) {
  if (!(link_bps > 0)) throw std::invalid_argument("DownlinkEstimator: link_bps must be above 0");
  if (config.window_ps <= 0 || !(config.shortfall_ratio > 0) ||
      !(config.recovered_ratio >= config.shortfall_ratio) || !(config.decrease_gain > 0) ||
      config.shortfall_windows < 1 || config.decrease_gain > 1 || !(config.probe_fraction > 0) ||
      !(config.floor_fraction > 0) || config.floor_fraction > 1 || !(config.busy_ratio > 0)) {
    throw std::invalid_argument("DownlinkEstimator: bad config");
  }
}

void DownlinkEstimator::start_window(TimePs now) {
  window_start_ps_ = now;
  last_ps_ = now;
  granted_bits_ = 0;
  bytes_ = 0;
  backlogged_ = true;
  link_total_at_start_ = link_total_now_;
  link_total_now_.reset();
}

bool DownlinkEstimator::observe(TimePs now, std::uint64_t bytes, double granted_bps,
                                bool backlogged) {
  if (!started_) {
    started_ = true;
    start_window(now);
    return false;
  }
  if (now <= last_ps_) return false;
  granted_bits_ += std::max(0.0, granted_bps) * static_cast<double>(now - last_ps_) /
                   static_cast<double>(kPsPerSec);
  last_ps_ = now;
  bytes_ += bytes;
  backlogged_ = backlogged_ && backlogged && granted_bps > 0;
  if (now - window_start_ps_ < config_.window_ps) return false;

  const double seconds =
      static_cast<double>(now - window_start_ps_) / static_cast<double>(kPsPerSec);
  const double achieved_bits = static_cast<double>(bytes_) * 8;
  const double granted_bits = granted_bits_;
  const bool judged = backlogged_ && granted_bits > 0;
  link_busy_ = link_total_at_start_ && link_total_now_ &&
               *link_total_now_ >= *link_total_at_start_ &&
               static_cast<double>(*link_total_now_ - *link_total_at_start_) * 8 >=
                   config_.busy_ratio * link_bps_ * seconds;
  start_window(now);
  if (!judged) return false;

  const double before = budget_bps_;
  last_ratio_ = achieved_bits / granted_bits;
  if (last_ratio_ < config_.shortfall_ratio) {
    ++shortfalls_;
    shortfall_bits_ += achieved_bits;
    shortfall_seconds_ += seconds;
    if (shortfalls_ >= config_.shortfall_windows) {
      short_of_grants_ = true;
      const double achieved_bps = shortfall_bits_ / shortfall_seconds_;
      if (achieved_bps < budget_bps_) {
        budget_bps_ += config_.decrease_gain * (achieved_bps - budget_bps_);
      }
      shortfalls_ = 0;
      shortfall_bits_ = 0;
      shortfall_seconds_ = 0;
    }
  } else {
    shortfalls_ = 0;
    shortfall_bits_ = 0;
    shortfall_seconds_ = 0;
    if (last_ratio_ >= config_.recovered_ratio) {
      short_of_grants_ = false;
      budget_bps_ += config_.probe_fraction * link_bps_;
    }
  }
  budget_bps_ = std::clamp(budget_bps_, floor_bps(), link_bps_);
  return budget_bps_ != before;
}

}  // namespace safs::core
