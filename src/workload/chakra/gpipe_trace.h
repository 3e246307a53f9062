// A Chakra trace of GPipe training written from scratch: the example's and
// the tests' input (tools/chakra_gen writes it to files). Stage s is rank s;
// each microbatch's forward is received from the stage before, computed and
// sent on, then the backwards run in reverse microbatch order the other way,
// and an optional all-reduce over every rank closes the iteration (a
// data-parallel gradient sync). Node ids follow issue order; each compute
// node has a ctrl dep on the rank's previous compute node (one stream) and
// data deps on what it consumes, as Chakra's converters record them.
#pragma once

#include <cstdint>
#include <vector>

#include "workload/chakra/chakra_trace.h"

namespace safs {

struct GpipeTraceOptions {
  int stages = 4;
  int microbatches = 8;
  std::uint64_t forward_us = 100;
  std::uint64_t backward_us = 200;
  std::int64_t activation_bytes = 1 << 20;  // per microbatch, each way
  std::int64_t allreduce_bytes = 0;         // 0: no closing all-reduce
};

// One ChakraRank per stage, `path` "rank s".
std::vector<ChakraRank> gpipe_trace(const GpipeTraceOptions& options);

}  // namespace safs
