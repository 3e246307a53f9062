// One control connection: buffered writes of encoded frames, reads decoded
// frame by frame. A frame that does not decode, or a stream that ends inside
// a frame, is a protocol error: the owner closes this connection only.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/wire.h"

namespace safs::runtime {

class ControlChannel {
 public:
  explicit ControlChannel(int fd) : fd_(fd) {}
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

  int fd() const { return fd_; }
  // Bytes that arrived before this channel took the socket over.
  void feed(std::span<const std::uint8_t> bytes);

  // Queues a frame and writes what the socket takes now.
  void send(const wire::Message& message);
  // Writes queued bytes. False on a socket error.
  bool flush();
  bool wants_write() const { return written_ < out_.size(); }

  enum class ReadResult : std::uint8_t { kOk, kClosed, kProtocolError };
  // Reads what is there and appends the decoded messages to `messages`.
  // kClosed: orderly end; kProtocolError: see error().
  ReadResult read(std::vector<wire::Message>& messages);
  const std::string& error() const { return error_; }

  std::uint64_t bytes_sent() const { return bytes_sent_; }
  std::uint64_t bytes_received() const { return bytes_received_; }

 private:
  bool decode_buffered(std::vector<wire::Message>& messages);

  int fd_;
  std::vector<std::uint8_t> in_;
  std::vector<std::uint8_t> out_;
  std::size_t written_ = 0;
  std::string error_;
  std::uint64_t bytes_sent_ = 0;
  std::uint64_t bytes_received_ = 0;
};

}  // namespace safs::runtime
