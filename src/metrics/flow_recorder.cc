#include "metrics/flow_recorder.h"

namespace safs {

TimePs ideal_fct_ps(const PathSummary& path, std::uint64_t size_bytes, std::uint32_t mtu_bytes,
                    std::uint32_t header_bytes) {
  const std::uint64_t packets = (size_bytes + mtu_bytes - 1) / mtu_bytes;
  const std::uint64_t wire_bytes = size_bytes + packets * header_bytes;
  const std::uint64_t last_wire = size_bytes - (packets - 1) * mtu_bytes + header_bytes;
  TimePs total = serialization_ps(wire_bytes, path.bottleneck_bps) + path.propagation_ps;
  for (const std::uint64_t rate_bps : path.downstream_rates_bps) {
    total += serialization_ps(last_wire, rate_bps);
  }
  return total;
}

void FlowRecorder::on_flow_complete(const FlowSpec& flow, TimePs at) {
  FlowRecord& record = records_[flow.id];
  if (record.complete()) return;
  record.finish_ps = at;
  ++completed_;
}

}  // namespace safs
