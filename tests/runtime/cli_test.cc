// safs-rt's command line: every bad input exits 2 with a message naming the
// option and what was expected; a failed transfer or connection exits 1 and
// says so (never met=1, never exit 0); --version names the source commit.
// Loopback only; each case ends in seconds.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "support/cli_run.h"

namespace {

using safs::testing::CliResult;
using safs::testing::contains;

CliResult run_rt(const std::string& args) {
  return safs::testing::run_tool(std::string(SAFS_RT_PATH) + " --insecure-loopback-only", args);
}

void expect_bad_input(const std::string& args, const std::string& message) {
  const CliResult r = run_rt(args);
  EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
  EXPECT_TRUE(contains(r.output, message)) << args << "\n" << r.output;
}

// A loopback port nobody listens on: bound (so nobody else takes it) and
// not listening, so a connect is refused at once.
class ClosedPort {
 public:
  ClosedPort() : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    EXPECT_EQ(bind(fd_, reinterpret_cast<sockaddr*>(&address), length), 0);
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~ClosedPort() { close(fd_); }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
};

TEST(SafsRtCli, DownlinkMustBeAPositiveRate) {
  // Accepted before, a receiver of 0 Mbit/s left its sender waiting for ever.
  expect_bad_input("recv --listen 127.0.0.1:0 --downlink-mbps 0",
                   "--downlink-mbps: expected a number of Mbit/s > 0");
  expect_bad_input("recv --listen 127.0.0.1:0 --downlink-mbps -5", "got -5");
  expect_bad_input("recv --listen 127.0.0.1:0 --downlink-mbps inf", "got inf");
}

TEST(SafsRtCli, SwitchesTakeNoValue) {
  expect_bad_input("recv --listen 127.0.0.1:0 --no-edf-when-short=maybe", "--no-edf-when-short");
  expect_bad_input("recv --listen 127.0.0.1:0 --slack-adaptive=maybe", "--slack-adaptive");
  expect_bad_input("send --to 127.0.0.1:1 --bytes 1 --no-contention-fallback=maybe",
                   "--no-contention-fallback");
}

TEST(SafsRtCli, SlackMustBeAFiniteNonNegativeTime) {
  const ClosedPort port;
  expect_bad_input("send --to " + port.address() + " --slack-ms -5",
                   "--slack-ms: expected a number of ms >= 0");
  expect_bad_input("send --to " + port.address() + " --slack-ms nan", "got nan");
}

TEST(SafsRtCli, SizesAndTagsAreCheckedNotWrapped) {
  const ClosedPort port;
  expect_bad_input("send --to " + port.address() + " --bytes -5",
                   "--bytes: expected an integer from 1 to 1073741824");
  expect_bad_input("send --to " + port.address() + " --bytes 99999999999999999999",
                   "got 99999999999999999999");
  expect_bad_input("send --to " + port.address() + " --tag -1", "--tag: expected an integer");
}

TEST(SafsRtCli, AddressesNameTheirOption) {
  expect_bad_input("send --to 127.0.0.1", "--to: expected a numeric host:port");
  expect_bad_input("send --to 127.0.0.1:0", "--to: expected a port from 1 to 65535");
  expect_bad_input("recv --listen 127.0.0.1:0 --metrics nowhere", "--metrics: expected a numeric");
  // Without a key, loopback only.
  expect_bad_input("recv --listen 8.8.8.8:7002", "--listen 8.8.8.8:7002: not a loopback address");
  expect_bad_input("recv --listen 127.0.0.1:0 --count 0", "--count: expected at least 1");
  expect_bad_input("recv --listen 127.0.0.1:0 --count -1", "--count -1 (forever) needs --plain");
}

TEST(SafsRtCli, UnreadableKeyFileIsBadInput) {
  const CliResult r =
      safs::testing::run_tool(SAFS_RT_PATH, "--key-file /nonexistent recv --listen 127.0.0.1:0");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot read job key file /nonexistent")) << r.output;
}

// Aborted with an uncaught exception before.
TEST(SafsRtCli, ListenAddressThisHostLacksIsBadInput) {
  // A key, so the loopback rule does not decide first.
  const std::string key =
      safs::testing::write_temp("safs-rt-cli.key", std::string(64, 'a') + "\n").string();
  chmod(key.c_str(), 0600);
  const CliResult r =
      safs::testing::run_tool(SAFS_RT_PATH, "--key-file " + key + " recv --listen 192.0.2.1:7002");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--listen: cannot listen on 192.0.2.1:7002")) << r.output;
}

TEST(SafsRtCli, FailedSendReportsMetZeroAndExitsNonZero) {
  const ClosedPort port;
  const CliResult r = run_rt("send --to " + port.address() + " --slack-ms 5000");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "met=0")) << r.output;
  EXPECT_TRUE(contains(r.output, "state=failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot connect: Connection refused")) << r.output;
  const CliResult background = run_rt("send --to " + port.address());
  EXPECT_EQ(background.exit_code, 1) << background.output;
  EXPECT_TRUE(contains(background.output, "met=0")) << background.output;
  const CliResult plain = run_rt("send --plain --to " + port.address());
  EXPECT_EQ(plain.exit_code, 1) << plain.output;
  EXPECT_TRUE(contains(plain.output, "cannot connect to " + port.address())) << plain.output;
}

TEST(SafsRtCli, BulkToAClosedPortFailsWithAMessage) {
  const ClosedPort port;
  const CliResult r = run_rt("bulk --to " + port.address());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(
      r.output, "safs-rt bulk: cannot connect to " + port.address() + ": Connection refused"))
      << r.output;
}

TEST(SafsRtCli, VersionNamesTheSourceCommit) {
  const CliResult r = run_rt("--version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "safs-rt ")) << r.output;
  EXPECT_TRUE(contains(r.output, " (source ")) << r.output;
}

// A receiver in the background: its output, and where it listens.
class BackgroundReceiver {
 public:
  explicit BackgroundReceiver(const std::string& options, const std::string& recv_options = "")
      : pipe_(popen((std::string(SAFS_RT_PATH) + " " + options + " recv " + recv_options +
                     " --listen 127.0.0.1:0 --count 1 2>&1")
                        .c_str(),
                    "r")) {
    char line[512] = {};
    if (pipe_ != nullptr && fgets(line, sizeof line, pipe_) != nullptr) output_ = line;
    if (contains(output_, "recv-ready address=")) {
      address_ = output_.substr(output_.find('=') + 1, output_.find('\n') - output_.find('=') - 1);
    }
  }
  ~BackgroundReceiver() { finish(); }
  const std::string& address() const { return address_; }
  // Everything it printed, once it exited; its exit status.
  int finish() {
    if (pipe_ == nullptr) return status_;
    char line[512];
    while (fgets(line, sizeof line, pipe_) != nullptr) output_ += line;
    status_ = pclose(pipe_);
    pipe_ = nullptr;
    return status_;
  }
  const std::string& output() const { return output_; }

 private:
  FILE* pipe_;
  std::string output_;
  std::string address_;
  int status_ = -1;
};

std::string checksum_of(const std::string& text) {
  const auto at = text.find("checksum=");
  return at == std::string::npos ? std::string("none") : text.substr(at + 9, 16);
}

TEST(SafsRtCli, MembersWithARosterTransferAndOthersAreRefused) {
  const std::string dir = ::testing::TempDir() + "safs-rt-members-" + std::to_string(getpid());
  ASSERT_EQ(system(("rm -rf " + dir + " && mkdir -p " + dir).c_str()), 0);
  std::string roster;
  for (const char* name : {"rank-0", "rank-1"}) {
    const CliResult made =
        run_rt(std::string("keygen --name ") + name + " --out " + dir + "/" + name + ".key");
    ASSERT_EQ(made.exit_code, 0) << made.output;
    EXPECT_TRUE(contains(made.output, std::string(name) + " ")) << made.output;
    roster += made.output;
    struct stat info {};
    ASSERT_EQ(stat((dir + "/" + name + ".key").c_str(), &info), 0);
    EXPECT_EQ(info.st_mode & 077, 0u);
  }
  std::ofstream(dir + "/roster") << roster;
  const std::string job = " --insecure-loopback-only --roster " + dir + "/roster";
  expect_bad_input("keygen --name rank-0 --out " + dir + "/rank-0.key",
                   "--out " + dir + "/rank-0.key: File exists");
  expect_bad_input("--roster " + dir + "/roster recv --listen 127.0.0.1:0",
                   "--roster needs --member-key");
  {
    BackgroundReceiver receiver(job + " --member-key " + dir + "/rank-0.key");
    ASSERT_FALSE(receiver.address().empty()) << receiver.output();
    // A member not in the roster: refused at the handshake.
    const CliResult outsider = run_rt("send --to " + receiver.address() + " --bytes 1000");
    EXPECT_EQ(outsider.exit_code, 1) << outsider.output;
    const CliResult sent = run_rt(job + " --member-key " + dir + "/rank-1.key send --to " +
                                  receiver.address() + " --bytes 100000 --slack-ms 5000 --tag 3");
    EXPECT_EQ(receiver.finish(), 0) << receiver.output();
    EXPECT_EQ(sent.exit_code, 0) << sent.output;
    EXPECT_EQ(checksum_of(sent.output), checksum_of(receiver.output())) << receiver.output();
    EXPECT_TRUE(contains(receiver.output(), "member (none) is not in this job's roster"))
        << receiver.output();
    EXPECT_TRUE(contains(receiver.output(), "recv tag=3 bytes=100000 ")) << receiver.output();
    EXPECT_TRUE(contains(receiver.output(), " member=rank-1\n")) << receiver.output();
  }
  ASSERT_EQ(system(("rm -rf " + dir).c_str()), 0);
}

TEST(SafsRtCli, TransferOverLoopbackMeetsItsDeadline) {
  BackgroundReceiver receiver("--insecure-loopback-only");
  ASSERT_FALSE(receiver.address().empty()) << receiver.output();
  const CliResult sent =
      run_rt("send --to " + receiver.address() + " --bytes 100000 --slack-ms 5000 --tag 7");
  EXPECT_EQ(receiver.finish(), 0) << receiver.output();
  EXPECT_EQ(sent.exit_code, 0) << sent.output;
  EXPECT_TRUE(contains(sent.output, "met=1")) << sent.output;
  EXPECT_EQ(checksum_of(sent.output), checksum_of(receiver.output()))
      << sent.output << receiver.output();
  EXPECT_TRUE(contains(receiver.output(), "recv tag=7 bytes=100000")) << receiver.output();
  // Loopback loses nothing and queues nothing: never a contended path.
  EXPECT_TRUE(contains(sent.output, "contended_paths=0")) << sent.output;
}

TEST(SafsRtCli, SendWithoutTheContentionFallbackStillTransfers) {
  BackgroundReceiver receiver("--insecure-loopback-only");
  ASSERT_FALSE(receiver.address().empty()) << receiver.output();
  const CliResult sent = run_rt("send --no-contention-fallback --to " + receiver.address() +
                                " --bytes 100000 --slack-ms 5000 --tag 8");
  EXPECT_EQ(receiver.finish(), 0) << receiver.output();
  EXPECT_EQ(sent.exit_code, 0) << sent.output;
  EXPECT_TRUE(contains(sent.output, "met=1 ")) << sent.output;
  EXPECT_TRUE(contains(sent.output, "contended_paths=0")) << sent.output;
}

TEST(SafsRtCli, ReceiverWithoutEdfWhenShortTransfersAndCountsNoShortfall) {
  BackgroundReceiver receiver("--insecure-loopback-only", "--no-edf-when-short");
  ASSERT_FALSE(receiver.address().empty()) << receiver.output();
  const CliResult sent =
      run_rt("send --to " + receiver.address() + " --bytes 100000 --slack-ms 5000 --tag 9");
  EXPECT_EQ(receiver.finish(), 0) << receiver.output();
  EXPECT_EQ(sent.exit_code, 0) << sent.output;
  EXPECT_TRUE(contains(sent.output, "met=1 ")) << sent.output;
  EXPECT_TRUE(contains(receiver.output(), "shortfall_episodes=0")) << receiver.output();
  EXPECT_TRUE(contains(receiver.output(), "quota_demotions=0")) << receiver.output();
}

}  // namespace
