// Hostile peers driven from a test: a blocking TCP client that writes raw
// bytes (RawPeer), and one that runs the authenticated handshake with a key
// of the test's choosing and then writes sealed frames (ScriptedPeer), so a
// test can play an authenticated tenant that breaks the rules, or an
// outsider without the key. A ScriptedPeer may also answer a connection an
// endpoint opened (ScriptedListener), to play a receiver. Loopback only.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runtime/clock.h"
#include "runtime/security.h"
#include "runtime/wire.h"

namespace safs::runtime::testing {

inline std::vector<std::uint8_t> frame(const wire::Message& message) {
  std::vector<std::uint8_t> bytes;
  wire::encode(message, bytes);
  return bytes;
}

inline sockaddr_in loopback(std::uint16_t port) {
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  return address;
}

// A connection a ScriptedListener accepted (-1: none came in time).
struct AcceptedConnection {
  int fd = -1;
};

class RawPeer {
 public:
  explicit RawPeer(AcceptedConnection accepted) : fd_(accepted.fd), connected_(accepted.fd >= 0) {}
  explicit RawPeer(std::uint16_t port) {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(port);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  }
  ~RawPeer() { close(fd_); }
  RawPeer(const RawPeer&) = delete;
  RawPeer& operator=(const RawPeer&) = delete;
  bool connected() const { return connected_; }
  void write(const std::vector<std::uint8_t>& bytes) {
    [[maybe_unused]] auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
  }
  void write(const wire::Message& message) { write(frame(message)); }
  void end_writes() { shutdown(fd_, SHUT_WR); }
  // Whether the other side closes within `timeout_ns` (reads and drops what comes).
  bool closed_within(std::int64_t timeout_ns) {
    const std::int64_t until = monotonic_ns() + timeout_ns;
    char buffer[4096];
    while (monotonic_ns() < until) {
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 10) <= 0) continue;
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return true;
    }
    return false;
  }
  // The next frame from the other side within `timeout_ns`, undecoded frames kept.
  std::optional<wire::Message> next_frame(std::int64_t timeout_ns) {
    const std::int64_t until = monotonic_ns() + timeout_ns;
    for (;;) {
      const wire::DecodeResult result = wire::decode(in_);
      if (result.status == wire::DecodeStatus::kMessage) {
        in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(result.consumed_bytes));
        return result.message;
      }
      if (result.status == wire::DecodeStatus::kInvalid || monotonic_ns() >= until) {
        return std::nullopt;
      }
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, 10) <= 0) continue;
      std::uint8_t buffer[4096];
      const ssize_t n = recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return std::nullopt;
      in_.insert(in_.end(), buffer, buffer + n);
    }
  }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
  bool connected_ = false;
  std::vector<std::uint8_t> in_;
};

// A loopback port an endpoint may connect to, as to a receiver.
class ScriptedListener {
 public:
  ScriptedListener() {
    fd_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address = loopback(0);  // any free port
    socklen_t length = sizeof address;
    if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
        listen(fd_, 16) == 0 &&
        getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
      port_ = ntohs(address.sin_port);
    }
  }
  ~ScriptedListener() { close(fd_); }
  ScriptedListener(const ScriptedListener&) = delete;
  ScriptedListener& operator=(const ScriptedListener&) = delete;
  std::uint16_t port() const { return port_; }  // 0: could not listen
  AcceptedConnection accept_within(std::int64_t timeout_ns) {
    pollfd p{fd_, POLLIN, 0};
    const int wait_ms = static_cast<int>(timeout_ns / 1'000'000);
    if (poll(&p, 1, wait_ms) <= 0) return {};
    return {::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)};
  }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// A Hello from an endpoint listening on `listen_port` (its identity
// without a roster: 127.0.0.1 and that port), speaking for `member`, with
// these capability bits (wire::kCap...).
inline wire::Hello hello_from(std::uint16_t listen_port = 9, const std::string& member = "",
                              std::uint32_t capabilities = 0) {
  wire::Hello hello;
  hello.capabilities = capabilities;
  hello.downlink_bps = 1'000'000'000;
  hello.listen_port = listen_port;
  hello.nonce = random_nonce();
  hello.member = member;
  return hello;
}

// The key of insecure_loopback_only endpoints (public: all zeros).
inline JobKey loopback_key() { return JobKey{}; }

// Who a scripted peer says it is: its listen port and, to sign with, a
// member key; `claimed_member` (when set) is the name its Hello gives
// instead of the key's own, to play a member claiming another's name.
struct ScriptedIdentity {
  std::uint16_t listen_port = 9;
  std::optional<MemberKey> member;
  std::optional<std::string> claimed_member;
  std::uint32_t capabilities = 0;  // its Hello's
};

class ScriptedPeer {
 public:
  ScriptedPeer(std::uint16_t port, const JobKey& key = loopback_key(),
               ScriptedIdentity identity = {})
      : control_(port), key_(key), identity_(std::move(identity)) {}
  // The peer that answers `accepted`, a connection an endpoint opened.
  ScriptedPeer(AcceptedConnection accepted, const JobKey& key, ScriptedIdentity identity)
      : control_(accepted), key_(key), identity_(std::move(identity)) {}

  RawPeer& raw() { return control_; }

  // Hello, the other side's Hello and proof, our proof. True when the other
  // side proved the key (it then expects ours; a wrong key fails there).
  bool handshake() {
    const std::string member = identity_.claimed_member.value_or(
        identity_.member ? identity_.member->name : std::string());
    const wire::Hello mine = hello_from(identity_.listen_port, member, identity_.capabilities);
    control_.write(mine);
    const auto theirs = control_.next_frame(2 * kNsPerSecond);
    if (!theirs || !std::holds_alternative<wire::Hello>(*theirs)) return false;
    crypto_ = std::make_unique<SessionCrypto>(key_, SessionCrypto::Role::kInitiator, frame(mine),
                                              frame(*theirs));
    const auto auth = control_.next_frame(2 * kNsPerSecond);
    if (!auth || !std::holds_alternative<wire::Auth>(*auth)) return false;
    wire::Auth own{crypto_->own_proof(), {}};
    if (identity_.member) own.signature = crypto_->member_signature(*identity_.member);
    control_.write(own);
    return crypto_->verify_peer_proof(std::get<wire::Auth>(*auth).proof);
  }
  // The handshake of a connection the other side opened: its Hello, ours,
  // its proof, ours. True when the other side proved the key.
  bool answer_handshake() {
    const auto theirs = control_.next_frame(2 * kNsPerSecond);
    if (!theirs || !std::holds_alternative<wire::Hello>(*theirs)) return false;
    const wire::Hello mine = hello_from(identity_.listen_port, "", identity_.capabilities);
    control_.write(mine);
    crypto_ = std::make_unique<SessionCrypto>(key_, SessionCrypto::Role::kResponder, frame(*theirs),
                                              frame(mine));
    const auto auth = control_.next_frame(2 * kNsPerSecond);
    if (!auth || !std::holds_alternative<wire::Auth>(*auth)) return false;
    control_.write(wire::Auth{crypto_->own_proof(), {}});
    return crypto_->verify_peer_proof(std::get<wire::Auth>(*auth).proof);
  }
  std::vector<std::uint8_t> sealed(const wire::Message& message) {
    wire::Sealed sealed;
    crypto_->seal(frame(message), sealed.bytes);
    return frame(sealed);
  }
  void send(const wire::Message& message) { control_.write(sealed(message)); }
  // The next sealed frame from the other side, opened.
  std::optional<wire::Message> receive(std::int64_t timeout_ns) {
    const auto outer = control_.next_frame(timeout_ns);
    if (!outer || !std::holds_alternative<wire::Sealed>(*outer)) return std::nullopt;
    std::vector<std::uint8_t> plain;
    if (!crypto_->open(std::get<wire::Sealed>(*outer).bytes, plain)) return std::nullopt;
    const wire::DecodeResult inner = wire::decode(plain);
    if (inner.status != wire::DecodeStatus::kMessage) return std::nullopt;
    return inner.message;
  }
  wire::DataOpen data_open(std::uint64_t flow, std::uint64_t size_bytes) const {
    return {crypto_->connection_id(), flow, size_bytes, crypto_->own_flow_token(flow, size_bytes)};
  }

 private:
  RawPeer control_;
  JobKey key_;
  ScriptedIdentity identity_;
  std::unique_ptr<SessionCrypto> crypto_;
};

}  // namespace safs::runtime::testing
