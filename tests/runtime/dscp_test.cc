// The grant's priority as a DSCP: the documented mapping, and set_priority()
// puts it on IPv4 and IPv6 sockets (read back with getsockopt).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/socket_ops.h"

namespace safs::runtime {
namespace {

TEST(Dscp, MappingIsTheDocumentedOne) {
  EXPECT_EQ(dscp_for_priority(0), 0);   // unscheduled bytes: best effort
  EXPECT_EQ(dscp_for_priority(1), 10);  // background: AF11
  EXPECT_EQ(dscp_for_priority(2), 18);  // AF21
  EXPECT_EQ(dscp_for_priority(3), 38);  // urgent, rank 2 and later: AF43
  EXPECT_EQ(dscp_for_priority(4), 36);  // urgent, rank 1: AF42
  EXPECT_EQ(dscp_for_priority(5), 34);  // urgent, rank 0: AF41
  EXPECT_EQ(dscp_for_priority(6), 46);  // EF
  EXPECT_EQ(dscp_for_priority(9), 46);  // clamped
  EXPECT_EQ(dscp_for_priority(-1), 0);
}

TEST(Dscp, SetPriorityMarksAnIpv4Socket) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  set_priority(fd, 5);
  int tos = 0, priority = 0;
  socklen_t length = sizeof tos;
  ASSERT_EQ(getsockopt(fd, IPPROTO_IP, IP_TOS, &tos, &length), 0);
  EXPECT_EQ(tos, 34 << 2);
  length = sizeof priority;
  ASSERT_EQ(getsockopt(fd, SOL_SOCKET, SO_PRIORITY, &priority, &length), 0);
  EXPECT_EQ(priority, 5);
  close(fd);
}

TEST(Dscp, SetPriorityMarksAnIpv6Socket) {
  const int fd = socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) GTEST_SKIP() << "no IPv6 here";
  set_priority(fd, 1);
  int tclass = 0;
  socklen_t length = sizeof tclass;
  ASSERT_EQ(getsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tclass, &length), 0);
  EXPECT_EQ(tclass, 10 << 2);
  close(fd);
}

}  // namespace
}  // namespace safs::runtime
