// The knobs of the scenario sections that configure the run itself:
// [simulation], [topology], [network], and the run's imperfections:
// [timestamps] and [jitter]. Defaults are the member initializers of
// ExperimentConfig, TopologySpec, NetworkConfig, TimestampErrorModel and OpJitter.
#pragma once

#include <optional>

#include "experiment/experiment.h"
#include "options/knob.h"

namespace safs {

// [topology] as written: the spec plus the two ways of giving the fabric
// rate, which the loader turns into spec.fabric_link.
struct TopologyOptions {
  TopologySpec spec;
  double oversubscription = 1.0;           // leaf_spine: host over uplink capacity per leaf
  std::optional<double> fabric_link_gbps;  // none: derived (see the knob)
};

KnobTable<ExperimentConfig> simulation_knobs();
KnobTable<TopologyOptions> topology_knobs();
KnobTable<ExperimentConfig> network_knobs();
KnobTable<ExperimentConfig> timestamp_knobs();
KnobTable<ExperimentConfig> jitter_knobs();

}  // namespace safs
