#include "transport/window/laxity_options.h"

namespace safs {

std::uint8_t laxity_level(const LaxityLevels& ladder, std::uint8_t top_level, TimePs laxity_ps,
                          TimePs rtt_ps) {
  const double laxity = static_cast<double>(laxity_ps);
  double threshold = ladder.first_threshold_rtts * static_cast<double>(rtt_ps);
  std::uint32_t steps = 0;
  while (steps + 1 < ladder.levels && (laxity_ps == kTimeNever || laxity >= threshold)) {
    ++steps;
    threshold *= ladder.threshold_growth;
  }
  return static_cast<std::uint8_t>(top_level - steps);
}

KnobTable<DctcpLlfOptions> dctcp_llf_knobs() {
  KnobTable<DctcpLlfOptions> t;
  t.include(dctcp_knobs(), SAFS_FIELD(dctcp));
  t.redoc("urgent_priority",
          "Top level (1-7, strict, higher first) of urgent flows, for laxity below the first "
          "threshold, and the level of their ACKs; the ladder goes down from it. 6, one below "
          "the control level 7, as the -prio baselines. Background stays at 0.");
  t.integer("laxity_levels", "levels", SAFS_FIELD(laxity.levels), 1, 7,
            "Priority levels urgent flows spread over, from urgent_priority down (at most "
            "urgent_priority, so every urgent level stays above background). 6: all of 6 .. 1.");
  t.number("laxity_first_rtts", "RTTs", SAFS_FIELD(laxity.first_threshold_rtts), 0.01, 1e6,
           "Laxity (deadline - now - unacknowledged bytes at the path's bottleneck rate) below "
           "which an urgent flow takes the top level, in unloaded path RTTs. 1: with less than "
           "one round of slack, any wait behind another flow's window makes it late.");
  t.number("laxity_growth", "", SAFS_FIELD(laxity.threshold_growth), 1.01, 1e6,
           "Each further threshold is this many times the previous; an urgent flow whose laxity "
           "is past the last one takes the lowest urgent level. 4: thresholds 1, 4, 16, 64 and "
           "256 RTTs, about 2.4 ms at 9.4 us, so the ladder spans slack from one round to "
           "milliseconds.");
  return t;
}

}  // namespace safs
