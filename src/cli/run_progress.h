// The `run` progress bar measures what ends the run, so its ETA holds: the
// computation's ops done, the measured inference requests finished, or the
// listed flows complete. Only a run with open-loop (Poisson) flows and
// nothing else to wait for falls back to simulated time against stop_ms,
// where the ETA is an upper bound.
#pragma once

#include "console/progress_line.h"
#include "experiment/experiment.h"

namespace safs::cli {

// Redraws `line` from the run loop; `experiment` and `line` must outlive the run.
void install_progress(Experiment& experiment, console::ProgressLine& line);

}  // namespace safs::cli
