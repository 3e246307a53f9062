// Buffers the caller posted for incoming messages, by tag (and, if the
// caller says so, by sender), and what became of each. A buffer takes the
// first announced flow with its tag (from its sender) that fits; flows no
// buffer takes are delivered whole to the message handler, or without one
// held for a later post (unexpected_messages.h, receive_side_posts.cc).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "runtime/completion_signal.h"
#include "runtime/endpoint.h"

namespace safs::runtime {

class PostedReceives {
 public:
  // Each receive that completes or fails is signalled there.
  explicit PostedReceives(CompletionSignal& completions) : completions_(completions) {}

  // `from`: the sender's address (host:listen port), empty for any sender.
  ReceiveHandle post(std::uint64_t tag, std::span<std::byte> buffer, std::string from);
  ReceiveStatus status(ReceiveHandle receive) const;

  // The oldest unclaimed buffer for `tag` from `peer` that holds
  // `size_bytes`, 0 if none.
  ReceiveHandle match(std::uint64_t tag, std::uint64_t size_bytes, const std::string& peer) const;
  // Gives a matched buffer to a flow from `peer`: returns where its bytes land.
  std::span<std::byte> claim(ReceiveHandle receive, const std::string& peer,
                             std::uint64_t size_bytes);
  void complete(ReceiveHandle receive, std::uint64_t bytes);
  // Fails the receive; it takes no message after.
  void fail(ReceiveHandle receive, const std::string& reason);

 private:
  struct Posted {
    std::uint64_t tag = 0;
    std::span<std::byte> buffer;
    std::string from;  // empty: any sender
    bool claimed = false;
    ReceiveStatus status;
  };

  CompletionSignal& completions_;
  ReceiveHandle next_receive_ = 1;
  std::map<ReceiveHandle, Posted> posted_;
};

}  // namespace safs::runtime
