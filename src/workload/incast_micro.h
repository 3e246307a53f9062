// The receiver-incast microbenchmark of the SAFS paper, parameterised for
// sweeps: `urgent` urgent flows of `size_bytes` from hosts 1..urgent to host
// 0 with no-bubble timestamps (12 + 6 i) ms, scaled by size / 64 MiB and by
// `deadline_scale`; `background_senders` hosts after them send size/8 flows
// back to back until the run ends. scenarios/micro/incast.toml is the default
// point (4 urgent flows of 64 MiB, scale 1).
#pragma once

#include <cstdint>
#include <vector>

#include "workload/bulk_chain.h"

namespace safs {

struct IncastMicroSpec {
  int urgent = 4;
  std::uint64_t size_bytes = 64ull << 20;
  double deadline_scale = 1.0;
  int background_senders = 4;
};

struct IncastMicro {
  int hosts = 0;  // a star: receiver, urgent senders, background senders
  std::vector<FlowSpec> flows;
  std::vector<BulkSpec> bulk;
};

IncastMicro make_incast_micro(const IncastMicroSpec& spec);

}  // namespace safs
