#include "runtime/unexpected_messages.h"

#include <algorithm>

namespace safs::runtime {

std::optional<std::string> UnexpectedMessages::reserve(std::uint64_t size_bytes) {
  if (reserved_messages_ + 1 > limits_.max_unexpected_messages) {
    return "would hold more than " + std::to_string(limits_.max_unexpected_messages) +
           " messages nobody posted a receive for";
  }
  if (reserved_bytes_ + size_bytes > limits_.max_unexpected_bytes) {
    return "would hold more than " + std::to_string(limits_.max_unexpected_bytes) +
           " bytes of messages nobody posted a receive for";
  }
  reserved_bytes_ += size_bytes;
  ++reserved_messages_;
  return std::nullopt;
}

void UnexpectedMessages::unreserve(std::uint64_t size_bytes) {
  reserved_bytes_ -= size_bytes;
  --reserved_messages_;
}

void UnexpectedMessages::hold(HeldMessage message) {
  held_bytes_ += message.size_bytes;
  held_.push_back(std::move(message));
}

const HeldMessage* UnexpectedMessages::oldest(std::uint64_t tag, const std::string& from) const {
  const auto it = std::find_if(held_.begin(), held_.end(), [&](const HeldMessage& held) {
    return held.tag == tag && (from.empty() || held.peer == from);
  });
  return it == held_.end() ? nullptr : &*it;
}

void UnexpectedMessages::take(const HeldMessage* message) {
  const auto it = std::find_if(held_.begin(), held_.end(),
                               [&](const HeldMessage& held) { return &held == message; });
  if (it == held_.end()) return;
  held_bytes_ -= it->size_bytes;
  unreserve(it->size_bytes);
  held_.erase(it);
}

}  // namespace safs::runtime
