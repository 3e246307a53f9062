// flows.csv written while the run goes: each final record's line is
// appended, in the order flows finish, to a spill file beside the output
// (unlinked at once, so nothing is left behind), with its place noted by
// flow id (8 bytes a flow). finish() writes flows.csv in id order from the
// spilled lines and the records still held, to path.tmp and then renamed
// over `path`, as every output is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "metrics/flow_recorder.h"

namespace safs {

class FlowsCsvFile {
 public:
  explicit FlowsCsvFile(std::string path);
  ~FlowsCsvFile();
  FlowsCsvFile(const FlowsCsvFile&) = delete;
  FlowsCsvFile& operator=(const FlowsCsvFile&) = delete;

  // A final record (FlowRecorder's sink).
  void add(const FlowRecord& record);
  // Writes the file: every flow `recorder` has seen, in id order.
  void finish(const FlowRecorder& recorder);

  std::size_t spilled() const { return spilled_; }

 private:
  // Where a flow's line sits in the spill: offset << 16 | length; 0 while not spilled.
  static constexpr int kLengthBits = 16;
  void flush();

  std::string path_;
  int spill_fd_ = -1;
  std::uint64_t spill_bytes_ = 0;  // written or buffered
  std::string buffer_;             // lines not yet written to the spill
  std::string line_;               // scratch
  std::vector<std::uint64_t> place_;
  std::size_t spilled_ = 0;
};

}  // namespace safs
