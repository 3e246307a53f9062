#include "runtime/control_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <variant>

#include "runtime/clock.h"

namespace safs::runtime {
namespace {

constexpr std::size_t kReadChunkBytes = 4096;

std::vector<std::uint8_t> encoded(const wire::Message& message) {
  std::vector<std::uint8_t> bytes;
  wire::encode(message, bytes);
  return bytes;
}

bool is_handshake(const wire::Message& message) {
  return std::holds_alternative<wire::Hello>(message) ||
         std::holds_alternative<wire::Auth>(message) ||
         std::holds_alternative<wire::Sealed>(message);
}

}  // namespace

ControlChannel::ControlChannel(int fd, const ChannelKeys& keys, const wire::Hello& local)
    : fd_(fd), keys_(keys), local_(local), state_(State::kAwaitHello) {
  write_plain(local_);
}

ControlChannel::ControlChannel(int fd, const ChannelKeys& keys, const wire::Hello& local,
                               const wire::Hello& peer)
    : fd_(fd), keys_(keys), local_(local), peer_member_(peer.member), state_(State::kAwaitAuth) {
  write_plain(local_);
  start_session(peer, local_, false);
}

ControlChannel::~ControlChannel() {
  if (fd_ >= 0) close(fd_);
}

void ControlChannel::start_session(const wire::Hello& initiator, const wire::Hello& responder,
                                   bool initiator_is_us) {
  crypto_ = std::make_unique<SessionCrypto>(
      keys_.job_key,
      initiator_is_us ? SessionCrypto::Role::kInitiator : SessionCrypto::Role::kResponder,
      encoded(initiator), encoded(responder));
  wire::Auth auth{crypto_->own_proof(), {}};
  if (keys_.member) auth.signature = crypto_->member_signature(*keys_.member);
  write_plain(auth);
  for (const wire::Message& message : held_) write_sealed(message);
  held_.clear();
  held_.shrink_to_fit();
}

void ControlChannel::feed(std::span<const std::uint8_t> bytes) {
  in_.insert(in_.end(), bytes.begin(), bytes.end());
  bytes_received_ += bytes.size();
}

void ControlChannel::write_plain(const wire::Message& message) { wire::encode(message, out_); }

void ControlChannel::write_sealed(const wire::Message& message) {
  scratch_.clear();
  wire::encode(message, scratch_);
  wire::Sealed sealed;
  crypto_->seal(scratch_, sealed.bytes);
  wire::encode(sealed, out_);
}

void ControlChannel::send(const wire::Message& message) {
  if (crypto_) {
    write_sealed(message);
  } else {
    held_.push_back(message);
  }
  flush();
}

bool ControlChannel::flush() {
  if (write_errno_ != 0) return false;
  while (written_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + written_, out_.size() - written_, MSG_NOSIGNAL);
    if (n > 0) {
      written_ += static_cast<std::size_t>(n);
      bytes_sent_ += static_cast<std::uint64_t>(n);
      continue;
    }
    // Not connected yet, or the socket buffer is full: the loop calls again.
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)) return true;
    write_errno_ = n < 0 ? errno : EPIPE;
    return false;
  }
  out_.clear();
  written_ = 0;
  return true;
}

ControlChannel::ReadResult ControlChannel::read(std::vector<wire::Message>& messages,
                                                std::size_t max_bytes) {
  const auto failed = [this] {
    return authentication_failed_ ? ReadResult::kAuthenticationFailed : ReadResult::kProtocolError;
  };
  // Decode before and after reading: bytes fed in before may hold frames.
  if (!decode_buffered(messages)) return failed();
  std::array<std::uint8_t, kReadChunkBytes> chunk{};
  std::size_t budget = max_bytes;
  while (budget > 0) {
    const ssize_t n = ::recv(fd_, chunk.data(), std::min(chunk.size(), budget), 0);
    if (n > 0) {
      budget -= static_cast<std::size_t>(n);
      feed(std::span(chunk.data(), static_cast<std::size_t>(n)));
      if (!decode_buffered(messages)) return failed();
      continue;
    }
    if (n == 0) {
      if (!in_.empty()) {
        error_ = "truncated frame: stream ended inside a frame (" + std::to_string(in_.size()) +
                 " bytes)";
        return ReadResult::kProtocolError;
      }
      return ReadResult::kClosed;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) return ReadResult::kOk;
    if (errno == EINTR) continue;
    error_ = std::string("read failed: ") + std::strerror(errno);
    return ReadResult::kClosed;
  }
  return ReadResult::kOk;  // more may be waiting: the loop (level-triggered) comes back
}

bool ControlChannel::check_auth(const wire::Auth& auth) {
  if (!crypto_->verify_peer_proof(auth.proof)) {
    error_ = "authentication failed: wrong proof (not this job's key)";
    return false;
  }
  if (keys_.roster.empty()) return true;
  const std::string claimed = peer_member_.empty() ? "(none)" : peer_member_;
  const auto listed = keys_.roster.find(peer_member_);
  if (listed == keys_.roster.end()) {
    error_ = "authentication failed: member " + claimed + " is not in this job's roster";
    return false;
  }
  if (!crypto_->verify_member_signature(listed->second.public_key, auth.signature)) {
    error_ = "authentication failed: member " + claimed +
             "'s signature does not verify (not that member's key)";
    return false;
  }
  verified_member_ = peer_member_;
  return true;
}

bool ControlChannel::decode_buffered(std::vector<wire::Message>& messages) {
  std::size_t offset = 0;
  bool ok = true;
  while (ok) {
    const wire::DecodeResult result = wire::decode(std::span(in_).subspan(offset));
    if (result.status == wire::DecodeStatus::kNeedMore) break;
    if (result.status == wire::DecodeStatus::kInvalid) {
      error_ = result.error;
      return false;
    }
    offset += result.consumed_bytes;
    ok = accept(result.message, messages);
  }
  in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(offset));
  if (in_.empty()) {
    partial_since_ns_ = 0;
  } else if (partial_since_ns_ == 0 || offset > 0) {
    partial_since_ns_ = monotonic_ns();  // a new frame began
  }
  return ok;
}

bool ControlChannel::accept(const wire::Message& message, std::vector<wire::Message>& messages) {
  switch (state_) {
    case State::kAwaitHello: {
      const auto* hello = std::get_if<wire::Hello>(&message);
      if (hello == nullptr) {
        error_ = "message before hello";
        return false;
      }
      peer_member_ = hello->member;
      start_session(local_, *hello, true);
      messages.push_back(message);
      state_ = State::kAwaitAuth;
      return true;
    }
    case State::kAwaitAuth: {
      const auto* auth = std::get_if<wire::Auth>(&message);
      if (auth == nullptr) {
        error_ = std::holds_alternative<wire::Hello>(message) ? "second hello on one connection"
                                                              : "message before authentication";
        return false;
      }
      if (!check_auth(*auth)) {
        authentication_failed_ = true;
        return false;
      }
      state_ = State::kOpen;
      messages.push_back(message);
      return true;
    }
    case State::kOpen:
      break;
  }
  const auto* sealed = std::get_if<wire::Sealed>(&message);
  if (sealed == nullptr) {
    error_ = "unsealed frame after authentication";
    return false;
  }
  if (!crypto_->open(sealed->bytes, scratch_)) {
    error_ = "sealed frame does not authenticate (forged, replayed or reordered)";
    authentication_failed_ = true;
    return false;
  }
  const wire::DecodeResult inner = wire::decode(scratch_);
  if (inner.status != wire::DecodeStatus::kMessage || inner.consumed_bytes != scratch_.size()) {
    error_ = "sealed frame holds no whole frame" +
             (inner.error.empty() ? std::string() : ": " + inner.error);
    return false;
  }
  if (is_handshake(inner.message)) {
    error_ = "handshake frame inside a sealed frame";
    return false;
  }
  messages.push_back(inner.message);
  return true;
}

}  // namespace safs::runtime
