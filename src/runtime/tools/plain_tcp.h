// The plain-TCP baseline safs-rt compares the runtime with: one connection
// per transfer, no scheduling. The receiver reads each connection to its end
// and closes it; the sender's transfer is complete when it sees that close.
// `bulk` is an unmanaged flow that sends until killed. Each returns the
// process's exit code and prints why it failed.
#pragma once

#include <cstdint>

#include "runtime/socket_ops.h"

namespace safs::rt {

int plain_recv(const runtime::PeerAddress& listen, int count);
int plain_send(const runtime::PeerAddress& to, std::uint64_t bytes, double slack_ms,
               std::uint64_t tag);
int plain_bulk(const runtime::PeerAddress& to);

}  // namespace safs::rt
