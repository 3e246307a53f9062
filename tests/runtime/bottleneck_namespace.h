// A bottleneck of its own for a runtime test: a forked child unshares a
// network namespace, gives its loopback an htb bottleneck of kLinkBps, and
// can run an unmanaged bulk TCP flow through it. Without root, namespaces
// or tc the test skips; the child is bounded by an alarm.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

namespace safs::runtime::testing {

inline constexpr int kSkip = 77;           // a child's exit status: skipped
inline constexpr double kLinkBps = 200e6;  // the htb rate below

// An unmanaged TCP flow from a thread to a thread until stopped.
class BulkFlow {
 public:
  bool start() {
    listener_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof a;
    if (listener_ < 0 || bind(listener_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
        listen(listener_, 1) != 0 ||
        getsockname(listener_, reinterpret_cast<sockaddr*>(&a), &length) != 0) {
      return false;
    }
    reader_ = std::thread([this] {
      const int fd = accept(listener_, nullptr, nullptr);
      std::vector<char> buffer(1 << 20);
      while (fd >= 0 && recv(fd, buffer.data(), buffer.size(), 0) > 0) {
      }
      if (fd >= 0) close(fd);
    });
    writer_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(writer_fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) return false;
    writer_ = std::thread([this] {
      std::vector<char> buffer(1 << 20, 'x');
      while (!stop_ && send(writer_fd_, buffer.data(), buffer.size(), MSG_NOSIGNAL) > 0) {
      }
    });
    return true;
  }
  ~BulkFlow() {
    stop_ = true;
    if (writer_fd_ >= 0) shutdown(writer_fd_, SHUT_RDWR);
    if (writer_.joinable()) writer_.join();
    if (writer_fd_ >= 0) close(writer_fd_);
    if (reader_.joinable()) reader_.join();
    if (listener_ >= 0) close(listener_);
  }

 private:
  int listener_ = -1;
  int writer_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread reader_, writer_;
};

// In the child: its own network namespace, loopback behind htb at kLinkBps.
// 0 when ready, else kSkip.
inline int enter_bottlenecked_namespace() {
  if (unshare(CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "SKIP: cannot create a network namespace\n");
    return kSkip;
  }
  // veth-like 64 KB GSO packets on loopback: the bucket holds several.
  const int tc = std::system(
      "ip link set lo up && tc qdisc add dev lo root handle 1: htb default 1 && "
      "tc class add dev lo parent 1: classid 1:1 htb rate 200mbit burst 256k cburst 256k && "
      "tc qdisc add dev lo parent 1:1 handle 10: pfifo limit 1000");
  if (tc != 0) {
    std::fprintf(stderr, "SKIP: cannot configure htb on the namespace's loopback\n");
    return kSkip;
  }
  return 0;
}

// Forks `body` into a child (bounded by an alarm) and reads its verdict.
inline void run_child(int (*body)()) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (a network namespace and tc)";
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(40);  // bounded whatever happens
    _exit(body());
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed (signal " << WTERMSIG(status) << ")";
  if (WEXITSTATUS(status) == kSkip) GTEST_SKIP() << "no namespace or htb here";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's line on stderr";
}

}  // namespace safs::runtime::testing
