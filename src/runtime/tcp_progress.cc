// Its own file: the kernel's struct tcp_info (linux/tcp.h) has the acked
// byte count that glibc's (netinet/tcp.h, used elsewhere) lacks, and the two
// headers cannot be included together.
#include "runtime/tcp_progress.h"

#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>

namespace safs::runtime {

std::optional<TcpProgress> tcp_progress(int fd) {
  tcp_info info{};
  socklen_t size = sizeof info;
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &size) != 0) return std::nullopt;
  // Kernels before 4.6 fill less of the struct: no acked bytes or lowest RTT.
  if (size < offsetof(tcp_info, tcpi_min_rtt) + sizeof info.tcpi_min_rtt) return std::nullopt;
  const std::int64_t queued_us = info.tcpi_min_rtt == 0 || info.tcpi_rtt < info.tcpi_min_rtt
                                     ? 0
                                     : std::int64_t{info.tcpi_rtt} - info.tcpi_min_rtt;
  return TcpProgress{info.tcpi_bytes_acked, info.tcpi_total_retrans, queued_us * 1000};
}

}  // namespace safs::runtime
