// Chakra execution-trace files: one per rank, a stream of length-delimited
// protobuf messages (a varint byte count, then the message), GlobalMetadata
// first and then one Node per message, as Chakra's feeder reads them
// (src/third_party/utils/protoio there). Built only with protobuf
// (libprotobuf-dev, protobuf-compiler); without it chakra_supported() is
// false and both functions throw.
#pragma once

#include <string>

#include "workload/chakra/chakra_trace.h"

namespace safs {

// Whether this build reads Chakra traces.
bool chakra_supported();

// Throws std::invalid_argument naming the file and the message (its index
// and byte offset) for a file that is missing, truncated or not a trace.
ChakraRank load_chakra_rank(const std::string& path);

// Writes `rank` as Chakra's tools would (tests and the example generator).
// Throws std::runtime_error if the file cannot be written.
void write_chakra_rank(const ChakraRank& rank, const std::string& path);

}  // namespace safs
