#include "cli/queue_sampler.h"

#include <cstdio>

#include "experiment/report.h"

namespace safs::cli {

QueueSampler::QueueSampler(Experiment& experiment, timeline::SamplerFanout& samplers, TimePs period)
    : experiment_(experiment) {
  const Network& net = experiment.network();
  for (std::size_t i = 0; i < net.ports().size(); ++i) {
    if (!net.port_at_host(i)) ports_.push_back(i);
  }
  last_bytes_.assign(ports_.size(), 0);
  csv_ = "time_s,port,queue_bytes\n";
  samplers.add(period, [this](TimePs at) { sample(at); });
}

void QueueSampler::sample(TimePs at) {
  const Network& net = experiment_.network();
  for (std::size_t k = 0; k < ports_.size(); ++k) {
    const std::uint64_t bytes = net.ports()[ports_[k]]->queue().bytes();
    if (bytes == last_bytes_[k]) continue;
    last_bytes_[k] = bytes;
    char time[32];
    std::snprintf(time, sizeof time, "%.9f", ps_to_sec(at));
    csv_ += std::string(time) + "," + net.ports()[ports_[k]]->name() + "," + std::to_string(bytes) +
            "\n";
  }
}

void QueueSampler::write_csv(const std::string& path) const { write_file_atomically(path, csv_); }

}  // namespace safs::cli
