#include "runtime/posted_receives.h"

#include <algorithm>

namespace safs::runtime {

ReceiveHandle PostedReceives::post(std::uint64_t tag, std::span<std::byte> buffer,
                                   std::string from) {
  const ReceiveHandle id = next_receive_++;
  posted_[id] = Posted{tag, buffer, std::move(from), false, {}};
  return id;
}

ReceiveStatus PostedReceives::status(ReceiveHandle receive) const {
  const auto it = posted_.find(receive);
  if (it == posted_.end()) return {FlowState::kFailed, "unknown receive", 0, {}};
  return it->second.status;
}

ReceiveHandle PostedReceives::match(std::uint64_t tag, std::uint64_t size_bytes,
                                    const std::string& peer) const {
  const auto it = std::find_if(posted_.begin(), posted_.end(), [&](const auto& entry) {
    const Posted& posted = entry.second;
    return !posted.claimed && posted.tag == tag && posted.buffer.size() >= size_bytes &&
           (posted.from.empty() || posted.from == peer);
  });
  return it == posted_.end() ? 0 : it->first;
}

std::span<std::byte> PostedReceives::claim(ReceiveHandle receive, const std::string& peer,
                                           std::uint64_t size_bytes) {
  Posted& posted = posted_.at(receive);
  posted.claimed = true;
  posted.status.peer = peer;
  return posted.buffer.first(size_bytes);
}

void PostedReceives::complete(ReceiveHandle receive, std::uint64_t bytes) {
  ReceiveStatus& status = posted_.at(receive).status;
  status.state = FlowState::kDone;
  status.bytes = bytes;
  completions_.notify();
}

void PostedReceives::fail(ReceiveHandle receive, const std::string& reason) {
  Posted& posted = posted_.at(receive);
  posted.claimed = true;  // a failed receive takes nothing more
  ReceiveStatus& status = posted.status;
  status.state = FlowState::kFailed;
  status.error = reason;
  completions_.notify();
}

}  // namespace safs::runtime
