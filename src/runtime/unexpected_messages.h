// Messages that came before anyone asked for them: a flow whose tag no
// posted buffer took, on an endpoint without a message handler, is held
// here (in progress, then whole) until a later post_receive() for its tag
// takes it. Bounded: a flow that would take it over its bytes or messages
// (EndpointLimits::max_unexpected_*) is refused at its announce, so a
// sender cannot fill this host's memory with messages nobody reads.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>

#include "runtime/endpoint_config.h"

namespace safs::runtime {

struct HeldMessage {
  std::string peer;    // the sender's address (host:listen port)
  std::string member;  // its member name (with a roster), else empty
  std::uint64_t tag = 0;
  std::uint64_t group = 0;
  std::unique_ptr<std::byte[]> bytes;
  std::uint64_t size_bytes = 0;
};

class UnexpectedMessages {
 public:
  explicit UnexpectedMessages(const EndpointLimits& limits) : limits_(limits) {}

  // Makes room for a flow of `size_bytes` that will be held when it ends;
  // the reason it cannot when it would go over a bound.
  std::optional<std::string> reserve(std::uint64_t size_bytes);
  // A reserved flow went elsewhere (a late post, the handler) or failed.
  void unreserve(std::uint64_t size_bytes);
  // A reserved flow is whole.
  void hold(HeldMessage message);
  // The oldest held message with `tag` (from `from`, unless empty), or null.
  const HeldMessage* oldest(std::uint64_t tag, const std::string& from) const;
  // Removes what oldest() returned.
  void take(const HeldMessage* message);

  std::uint64_t held_messages() const { return held_.size(); }
  std::uint64_t held_bytes() const { return held_bytes_; }

 private:
  const EndpointLimits& limits_;
  std::uint64_t reserved_bytes_ = 0;     // in progress and held
  std::uint64_t reserved_messages_ = 0;  // in progress and held
  std::uint64_t held_bytes_ = 0;
  std::list<HeldMessage> held_;  // oldest first
};

}  // namespace safs::runtime
