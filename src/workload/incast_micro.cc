#include "workload/incast_micro.h"

namespace safs {

IncastMicro make_incast_micro(const IncastMicroSpec& spec) {
  IncastMicro m;
  m.hosts = 1 + spec.urgent + spec.background_senders;
  const double unit_ms =
      static_cast<double>(spec.size_bytes) / static_cast<double>(64ull << 20) * spec.deadline_scale;
  for (int i = 0; i < spec.urgent; ++i) {
    FlowSpec f;
    f.id = static_cast<std::uint32_t>(i);
    f.src = 1 + i;
    f.dst = 0;
    f.size_bytes = spec.size_bytes;
    f.flow_class = FlowClass::kUrgent;
    f.deadline_ps = ms_to_ps((12.0 + 6.0 * i) * unit_ms);
    m.flows.push_back(f);
  }
  for (int b = 0; b < spec.background_senders; ++b) {
    BulkSpec chain;
    chain.src = 1 + spec.urgent + b;
    chain.dst = 0;
    chain.size_bytes = spec.size_bytes / 8;
    m.bulk.push_back(chain);
  }
  return m;
}

}  // namespace safs
