// htsim's connection matrix files (.cm), as the csg-htsim simulator reads
// them (sim/datacenter/connection_matrix.cpp there): a header
//   Nodes N / Connections C / Triggers T (optional) / Failures F (optional)
// then one line per connection,
//   SRC->DST [id I] [start US | trigger T] [size BYTES] [send_done_trigger T]
//            [recv_done_trigger T] [prio P]
// and one per trigger,
//   trigger id T oneshot | multishot | barrier count N
// '#' starts a comment line. Start times are in microseconds.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "base/time.h"

namespace safs {

enum class CmTriggerKind : std::uint8_t {
  kOneShot,    // starts every flow waiting on it, the first time it is activated
  kMultiShot,  // starts the next waiting flow (in file order) per activation
  kBarrier,    // starts every waiting flow at its count-th activation
};

struct CmTrigger {
  std::uint32_t id = 0;
  CmTriggerKind kind = CmTriggerKind::kOneShot;
  std::uint32_t count = 0;  // barrier: activations needed
};

struct CmConnection {
  int src = 0;
  int dst = 0;
  std::uint64_t size_bytes = 0;
  TimePs start_ps = kTimeNever;  // kTimeNever: started by `trigger`
  std::uint32_t trigger = 0;     // 0: none
  std::uint32_t send_done = 0;   // activated when the flow completes (0: none)
  std::uint32_t recv_done = 0;   // likewise
  int line = 0;                  // where it is in the file, for messages
};

struct ConnectionMatrixFile {
  int nodes = 0;
  std::vector<CmConnection> connections;  // in file order
  std::vector<CmTrigger> triggers;        // in file order
};

// Throws std::invalid_argument naming `name`, the line and the token, for
// anything htsim would refuse and for what safs-sim does not model (size 0,
// an endless flow; failure lines).
ConnectionMatrixFile parse_connection_matrix(std::istream& in, const std::string& name);
ConnectionMatrixFile load_connection_matrix(const std::string& path);

}  // namespace safs
