// Attacks with every party in a process of its own, as on a shared host:
// the receiver is `safs-rt recv` (the deployed tool), each hostile peer a
// forked process, the legitimate sender this test. The receiver's memory is
// read from /proc/PID/status (VmHWM, its peak RSS) and held to a budget of
// its own, apart from the test's buffers. Loopback only; each case ends in
// a few seconds and kills what it started.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "runtime/endpoint.h"
#include "runtime/scripted_peer.h"
#include "runtime/test_support.h"

namespace safs::runtime {
namespace {

using namespace safs::runtime::testing;  // NOLINT: the runtime tests' helpers

constexpr double kDownlinkMbps = 400;  // 50 MB/s
// The receiver holds the legitimate message (at most 15 MB here) and its
// own code and libraries (about 5 MB); a flood or ghost flows that grew its
// memory would pass this quickly (a flood once took 1.58 GB in 6.5 s).
constexpr std::int64_t kReceiverRssBudgetBytes = 64ll << 20;
constexpr std::uint64_t kLegitTag = 1000;

JobKey job_key() {
  JobKey key;
  key.fill(0x42);
  return key;
}

// The job key as a private file, for safs-rt.
class KeyFile {
 public:
  KeyFile() : path_(::testing::TempDir() + "safs-process-attack-" + std::to_string(getpid())) {
    std::ofstream out(path_);
    for (int i = 0; i < 32; ++i) out << "42";
    out << '\n';
    chmod(path_.c_str(), 0600);
  }
  ~KeyFile() { unlink(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `safs-rt recv` in a process of its own, its stdout read through a pipe.
class ReceiverProcess {
 public:
  explicit ReceiverProcess(const std::string& key_file) {
    int out[2];
    if (pipe(out) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], STDOUT_FILENO);
      close(out[0]);
      close(out[1]);
      const std::string downlink = std::to_string(kDownlinkMbps);
      // --count 2: it never ends on its own before the test has measured it.
      execl(SAFS_RT_PATH, SAFS_RT_PATH, "--key-file", key_file.c_str(), "recv", "--listen",
            "127.0.0.1:0", "--downlink-mbps", downlink.c_str(), "--count", "2",
            static_cast<char*>(nullptr));
      _exit(127);
    }
    close(out[1]);
    stdout_ = fdopen(out[0], "r");
    // Unbuffered, so that poll() on the pipe sees every line not yet read.
    if (stdout_ != nullptr) setvbuf(stdout_, nullptr, _IONBF, 0);
    char line[512] = {};
    if (stdout_ != nullptr && fgets(line, sizeof line, stdout_) != nullptr) {
      const std::string ready = line;
      const auto at = ready.find("address=");
      if (at != std::string::npos)
        address_ = PeerAddress::parse(ready.substr(at + 8, ready.find('\n') - at - 8));
    }
  }
  ~ReceiverProcess() { stop(); }
  const std::optional<PeerAddress>& address() const { return address_; }
  // Its peak resident set so far (VmHWM), in bytes; -1 when unreadable.
  std::int64_t peak_rss_bytes() const {
    std::ifstream status("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmHWM:", 0) == 0) return std::stoll(line.substr(6)) * 1024;  // kB
    }
    return -1;
  }
  // Waits up to `timeout_ns` for a line starting with `prefix`. The receiver
  // prints a message after it has answered its sender, so a test that
  // stopped it the moment the sender was done could lose the line.
  bool wait_for_line(const std::string& prefix, std::int64_t timeout_ns) {
    const std::int64_t until = monotonic_ns() + timeout_ns;
    const auto seen = [&] {
      return output_.rfind(prefix, 0) == 0 || output_.find("\n" + prefix) != std::string::npos;
    };
    while (stdout_ != nullptr && !seen()) {
      const std::int64_t left_ms = (until - monotonic_ns()) / kMs;
      pollfd ready{fileno(stdout_), POLLIN, 0};
      if (left_ms <= 0 || poll(&ready, 1, static_cast<int>(left_ms)) <= 0) return false;
      char line[512];
      if (fgets(line, sizeof line, stdout_) == nullptr) return false;
      output_ += line;
    }
    return seen();
  }
  // Kills it and returns everything it printed.
  std::string stop() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    if (stdout_ != nullptr) {
      char line[512];
      while (fgets(line, sizeof line, stdout_) != nullptr) output_ += line;
      fclose(stdout_);
      stdout_ = nullptr;
    }
    return output_;
  }

 private:
  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  std::optional<PeerAddress> address_;
  std::string output_;
};

// A hostile peer: `attack` runs in a forked process, which ends when it
// returns or after `bound_ns`, whichever is first, and is killed with the
// test. It reports one number (what it managed to do) through `report`.
class HostileProcess {
 public:
  using Report = std::function<void(std::uint64_t)>;
  HostileProcess(std::int64_t bound_ns, const std::function<void(const Report&)>& attack) {
    if (pipe(report_) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      alarm(static_cast<unsigned>(bound_ns / kSecond + 1));  // bounded even if the test dies
      close(report_[0]);
      attack([this](std::uint64_t value) {
        [[maybe_unused]] const auto n = write(report_[1], &value, sizeof value);
      });
      _exit(0);
    }
    close(report_[1]);
  }
  ~HostileProcess() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(report_[0]);
  }
  // What it reported (waits for it); 0 if it ended without a report.
  std::uint64_t report() {
    std::uint64_t value = 0;
    return read(report_[0], &value, sizeof value) == sizeof value ? value : 0;
  }

 private:
  pid_t pid_ = -1;
  int report_[2] = {-1, -1};
};

// The legitimate member's urgent transfer, from this process; the receiver
// prints the checksum of what it delivered.
struct LegitResult {
  FlowState state = FlowState::kFailed;
  std::int64_t fct_ns = 0;
  std::uint64_t checksum = 0;
};
LegitResult send_legit(const PeerAddress& to, std::size_t bytes, std::int64_t slack_ns) {
  EndpointConfig config = config_at("127.0.0.1", kDownlinkMbps * kMbps, nullptr);
  config.security.insecure_loopback_only = false;
  config.security.job_key = job_key();
  Endpoint sender(config);
  const auto payload = random_bytes(bytes, kLegitTag);
  const std::int64_t start = monotonic_ns();
  const FlowHandle flow = sender.send(to, payload, FlowHint::urgent_within(slack_ns, kLegitTag));
  LegitResult result;
  result.state = sender.wait(flow, 10 * kSecond).state;
  result.fct_ns = monotonic_ns() - start;
  result.checksum = checksum(payload);
  return result;
}

// The receiver delivered the legitimate message once, intact, in time.
void expect_delivered(const LegitResult& legit, std::int64_t slack_ns, const std::string& output) {
  EXPECT_EQ(legit.state, FlowState::kDone);
  constexpr std::int64_t kDoneReturnNs = 10 * kMs;  // the Done travels back
  EXPECT_LT(legit.fct_ns, slack_ns + kDoneReturnNs) << "FCT " << legit.fct_ns / kMs << " ms";
  char expected[64];
  std::snprintf(expected, sizeof expected, "checksum=%016llx",
                static_cast<unsigned long long>(legit.checksum));
  std::size_t deliveries = 0;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("recv tag=" + std::to_string(kLegitTag) + " ", 0) == 0) {
      ++deliveries;
      EXPECT_NE(line.find(expected), std::string::npos) << line;
    }
  }
  EXPECT_EQ(deliveries, 1u) << output;
}

TEST(ProcessAttack, ControlFloodLeavesTheReceiverWithinItsBudget) {
  KeyFile key;
  ReceiverProcess receiver(key.path());
  ASSERT_TRUE(receiver.address());
  const std::uint16_t port = receiver.address()->port;
  // An insider writes valid sealed Updates as fast as the socket takes them.
  constexpr std::int64_t kFloodNs = 1500 * kMs;
  HostileProcess flooder(kFloodNs, [port](const HostileProcess::Report& report) {
    ScriptedPeer flood(port, job_key());
    if (!flood.handshake()) return;
    std::uint64_t flood_bytes = 0;
    for (std::int64_t t = monotonic_ns(); monotonic_ns() - t < kFloodNs;) {
      std::vector<std::uint8_t> burst;
      for (int i = 0; i < 256; ++i) {
        const auto one = flood.sealed(wire::Update{7, 1'000'000, 1, 0xffffffffu, 0});
        burst.insert(burst.end(), one.begin(), one.end());
      }
      flood.raw().write(burst);  // blocks while the receiver holds it off
      flood_bytes += burst.size();
    }
    report(flood_bytes);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the flood is on
  const LegitResult legit = send_legit(*receiver.address(), 8 << 20, 1500 * kMs);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // still flooding
  const std::int64_t peak = receiver.peak_rss_bytes();
  const std::uint64_t flood_bytes = flooder.report();  // it floods until its time is up
  receiver.wait_for_line("recv tag=" + std::to_string(kLegitTag) + " ", 2 * kSecond);
  const std::string output = receiver.stop();
  std::cout << "flood: " << (flood_bytes >> 20)
            << " MB of sealed updates in 1.5 s, receiver peak RSS " << (peak >> 20) << " MB\n";
  EXPECT_GT(flood_bytes, 1u << 20);
  expect_delivered(legit, 1500 * kMs, output);
  EXPECT_GT(peak, 0);
  EXPECT_LT(peak, kReceiverRssBudgetBytes);
}

TEST(ProcessAttack, GhostFlowsLoseTheirGrantsAndHoldNoMemory) {
  KeyFile key;
  ReceiverProcess receiver(key.path());
  ASSERT_TRUE(receiver.address());
  const std::uint16_t port = receiver.address()->port;
  // An insider announces 64 urgent flows of 1 MB, opens their data
  // connections and never sends a byte.
  constexpr int kGhosts = 64;
  HostileProcess ghost(3 * kSecond, [port](const HostileProcess::Report& report) {
    ScriptedPeer control(port, job_key());
    if (!control.handshake()) return;
    std::vector<std::unique_ptr<RawPeer>> connections;
    for (std::uint64_t flow = 1; flow <= kGhosts; ++flow) {
      control.send(wire::Announce{flow, 1 << 20, 1'000'000, 1, 0, 0, 50});
      connections.push_back(std::make_unique<RawPeer>(port));
      if (connections.back()->connected()) {
        connections.back()->write(control.data_open(flow, 1 << 20));
      }
    }
    report(connections.size());
    std::this_thread::sleep_for(std::chrono::seconds(3));  // holds them, silent
  });
  ASSERT_EQ(ghost.report(), static_cast<std::uint64_t>(kGhosts));  // all announced and open
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  // 15 MB with 700 ms slack at 50 MB/s: 300 ms at the full rate.
  const LegitResult legit = send_legit(*receiver.address(), 15'000'000, 700 * kMs);
  const std::int64_t peak = receiver.peak_rss_bytes();
  receiver.wait_for_line("recv tag=" + std::to_string(kLegitTag) + " ", 2 * kSecond);
  const std::string output = receiver.stop();
  std::cout << "ghosts: legitimate 15 MB in " << legit.fct_ns / kMs << " ms, receiver peak RSS "
            << (peak >> 20) << " MB\n";
  expect_delivered(legit, 700 * kMs, output);
  EXPECT_GT(peak, 0);
  EXPECT_LT(peak, kReceiverRssBudgetBytes);
}

}  // namespace
}  // namespace safs::runtime
