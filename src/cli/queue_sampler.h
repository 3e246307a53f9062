// `safs-sim run --queue-sample-us X`: the queue depth of every switch egress
// port, sampled every X us of simulated time, written as queues.csv
// (time_s,port,queue_bytes; a row only when a port's depth differs from its
// previous sample, starting from zero). It observes from the run loop, so
// the run's results are the same with or without it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "experiment/experiment.h"
#include "timeline/sampler_fanout.h"

namespace safs::cli {

class QueueSampler {
 public:
  QueueSampler(Experiment& experiment, timeline::SamplerFanout& samplers, TimePs period);
  void write_csv(const std::string& path) const;
  const std::string& csv_text() const { return csv_; }  // what write_csv writes

 private:
  void sample(TimePs at);

  Experiment& experiment_;
  std::vector<std::size_t> ports_;         // switch egress ports, by network index
  std::vector<std::uint64_t> last_bytes_;  // per entry of ports_
  std::string csv_;
};

}  // namespace safs::cli
