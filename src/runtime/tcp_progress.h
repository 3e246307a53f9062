// What kernel TCP has delivered on a connection, from TCP_INFO.
#pragma once

#include <cstdint>
#include <optional>

namespace safs::runtime {

struct TcpProgress {
  std::uint64_t bytes_acked = 0;    // payload bytes the peer acknowledged (RFC 4898)
  std::uint32_t retransmits = 0;    // segments retransmitted over the connection's life
  std::int64_t queue_delay_ns = 0;  // smoothed RTT above the lowest RTT seen: time queued
};

// nullopt when the socket is not TCP or the kernel does not say.
std::optional<TcpProgress> tcp_progress(int fd);

}  // namespace safs::runtime
