#include "runtime/control_channel.h"

#include <sys/socket.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>

namespace safs::runtime {
namespace {

constexpr std::size_t kReadChunkBytes = 4096;

}  // namespace

ControlChannel::~ControlChannel() {
  if (fd_ >= 0) close(fd_);
}

void ControlChannel::feed(std::span<const std::uint8_t> bytes) {
  in_.insert(in_.end(), bytes.begin(), bytes.end());
  bytes_received_ += bytes.size();
}

void ControlChannel::send(const wire::Message& message) {
  wire::encode(message, out_);
  flush();
}

bool ControlChannel::flush() {
  while (written_ < out_.size()) {
    const ssize_t n = ::send(fd_, out_.data() + written_, out_.size() - written_, MSG_NOSIGNAL);
    if (n > 0) {
      written_ += static_cast<std::size_t>(n);
      bytes_sent_ += static_cast<std::uint64_t>(n);
      continue;
    }
    // Not connected yet, or the socket buffer is full: the loop calls again.
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOTCONN)) return true;
    return false;
  }
  out_.clear();
  written_ = 0;
  return true;
}

ControlChannel::ReadResult ControlChannel::read(std::vector<wire::Message>& messages) {
  // Decode before and after reading: bytes fed in before may hold frames.
  if (!decode_buffered(messages)) return ReadResult::kProtocolError;
  std::array<std::uint8_t, kReadChunkBytes> chunk{};
  for (;;) {
    const ssize_t n = ::recv(fd_, chunk.data(), chunk.size(), 0);
    if (n > 0) {
      feed(std::span(chunk.data(), static_cast<std::size_t>(n)));
      if (!decode_buffered(messages)) return ReadResult::kProtocolError;
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
}

bool ControlChannel::decode_buffered(std::vector<wire::Message>& messages) {
  std::size_t offset = 0;
  for (;;) {
    const wire::DecodeResult result = wire::decode(std::span(in_).subspan(offset));
    if (result.status == wire::DecodeStatus::kNeedMore) break;
    if (result.status == wire::DecodeStatus::kInvalid) {
      error_ = result.error;
      return false;
    }
    messages.push_back(result.message);
    offset += result.consumed_bytes;
  }
  in_.erase(in_.begin(), in_.begin() + static_cast<std::ptrdiff_t>(offset));
  return true;
}

}  // namespace safs::runtime
