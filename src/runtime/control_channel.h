// One control connection: the authenticated handshake, then sealed frames.
//
//   initiator (connected)            responder (accepted)
//   Hello(nonce_i)           ->
//                            <-      Hello(nonce_r), Auth(proof_r)
//   Auth(proof_i)            ->
//   Sealed(...)              <->     Sealed(...)
//
// Both sides derive the session's keys from the job key and both Hellos
// (security.h); each proof answers the other side's nonce, and each Auth
// also carries the member's signature of both Hellos: with a roster, the
// peer's must verify under the key listed for the member its Hello names.
// A frame out of
// this order, a wrong proof, or a sealed frame that does not open (forged,
// replayed, reordered, from another connection) is a protocol error: the
// owner closes this connection only. Messages the owner sends before the
// keys exist wait here and go out sealed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/security.h"
#include "runtime/wire.h"

namespace safs::runtime {

// What a control connection proves and checks: the job key, the member this
// endpoint speaks for (signs with), and the roster peers are checked against
// (empty: no member is checked).
struct ChannelKeys {
  JobKey job_key{};
  std::optional<MemberKey> member;
  Roster roster;
};

class ControlChannel {
 public:
  // Initiator: sends `local` now and waits for the peer's Hello.
  ControlChannel(int fd, const ChannelKeys& keys, const wire::Hello& local);
  // Responder: the peer's Hello was read already; sends `local` and its proof.
  ControlChannel(int fd, const ChannelKeys& keys, const wire::Hello& local,
                 const wire::Hello& peer);
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  int fd() const { return fd_; }
  // Bytes that arrived before this channel took the socket over.
  void feed(std::span<const std::uint8_t> bytes);

  // Seals a frame (or holds it until the keys exist) and writes what the
  // socket takes now.
  void send(const wire::Message& message);
  // Writes queued bytes. False on a socket error, and on every call after
  // one (write_errno() says which: the first, as a failed connect reports it).
  bool flush();
  int write_errno() const { return write_errno_; }
  bool wants_write() const { return written_ < out_.size(); }

  // The peer proved it holds the job key (and, with a roster, its member's key).
  bool authenticated() const { return state_ == State::kOpen; }
  // The member the peer proved it is; empty without a roster.
  const std::string& verified_member() const { return verified_member_; }
  // The session's keys, once both Hellos are known (flow tokens).
  const SessionCrypto* crypto() const { return crypto_.get(); }

  enum class ReadResult : std::uint8_t { kOk, kClosed, kProtocolError, kAuthenticationFailed };
  // Reads at most `max_bytes` (a bound per loop turn: a flood cannot stall
  // the loop or grow memory) and appends the decoded messages: the peer's
  // Hello (initiator), an Auth once the peer is authenticated, then the
  // opened frames. kClosed: orderly end; kProtocolError: see error();
  // kAuthenticationFailed: a wrong proof or a sealed frame that does not open.
  ReadResult read(std::vector<wire::Message>& messages, std::size_t max_bytes);
  const std::string& error() const { return error_; }
  // Since when the bytes read end inside a frame (0: they end on a frame's
  // boundary). A peer that stops halfway through a frame is closed by its
  // owner after PeerLimits::partial_frame_timeout_ns.
  std::int64_t partial_frame_since_ns() const { return partial_since_ns_; }

  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t bytes_received() const { return bytes_received_; }

 private:
  enum class State : std::uint8_t { kAwaitHello, kAwaitAuth, kOpen };
  void write_plain(const wire::Message& message);
  void write_sealed(const wire::Message& message);
  void start_session(const wire::Hello& initiator, const wire::Hello& responder,
                     bool initiator_is_us);
  // The peer's Auth; false (and error_) when it does not authenticate.
  bool check_auth(const wire::Auth& auth);
  bool decode_buffered(std::vector<wire::Message>& messages);
  // One frame read in `state_`; false (and error_) on a protocol error.
  bool accept(const wire::Message& message, std::vector<wire::Message>& messages);

  int fd_;
  const ChannelKeys& keys_;
  wire::Hello local_;
  std::string peer_member_;  // what the peer's Hello claims
  std::string verified_member_;
  State state_;
  std::unique_ptr<SessionCrypto> crypto_;
  std::vector<wire::Message> held_;  // sent before the keys existed
  std::vector<std::uint8_t> in_;
  std::vector<std::uint8_t> out_;
  std::vector<std::uint8_t> scratch_;  // one frame's plain bytes
  std::size_t written_ = 0;
  std::int64_t partial_since_ns_ = 0;
  int write_errno_ = 0;
  std::string error_;
  bool authentication_failed_ = false;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t bytes_received_ = 0;
};

}  // namespace safs::runtime
