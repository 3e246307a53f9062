// ReceiveSide's late posts: a receive posted after its message came. The
// message is held whole (UnexpectedMessages) or still arriving (a flow in
// progress with a buffer of its own); the oldest one for the tag (and the
// sender, if named) is taken at once. One that does not fit fails the
// receive and stays held for a larger buffer.
#include <cstring>

#include "runtime/receive_side.h"

namespace safs::runtime {
namespace {

std::string does_not_fit(std::uint64_t size_bytes, std::uint64_t tag, const std::string& peer,
                         std::size_t buffer_bytes) {
  return "the message with tag " + std::to_string(tag) + " from " + peer + " has " +
         std::to_string(size_bytes) + " bytes, more than the posted buffer's " +
         std::to_string(buffer_bytes) + "; it stays held for a larger buffer";
}

}  // namespace

ReceiveHandle ReceiveSide::post_receive(std::uint64_t tag, std::span<std::byte> buffer,
                                        const std::optional<PeerAddress>& from) {
  const std::string sender = from ? from->text() : std::string();
  const ReceiveHandle receive = posted_.post(tag, buffer, sender);
  if (const HeldMessage* held = unexpected_.oldest(tag, sender)) {
    if (held->size_bytes > buffer.size()) {
      posted_.fail(receive, does_not_fit(held->size_bytes, tag, held->peer, buffer.size()));
      return receive;
    }
    const std::span<std::byte> target = posted_.claim(receive, held->peer, held->size_bytes);
    if (held->size_bytes != 0) std::memcpy(target.data(), held->bytes.get(), held->size_bytes);
    posted_.complete(receive, held->size_bytes);
    unexpected_.take(held);
    return receive;
  }
  attach_in_progress(receive, tag, buffer, sender);
  return receive;
}

bool ReceiveSide::attach_in_progress(ReceiveHandle receive, std::uint64_t tag,
                                     std::span<std::byte> buffer, const std::string& from) {
  for (auto& [id, flow] : incoming_) {  // by id: oldest announce first
    if (!flow.unexpected || flow.announce.tag != tag) continue;
    const Peer& peer = peers_.at(flow.peer);
    if (!from.empty() && peer.name != from) continue;
    const std::uint64_t size = flow.announce.size_bytes;
    if (size > buffer.size()) {
      posted_.fail(receive, does_not_fit(size, tag, peer.name, buffer.size()));
      return true;
    }
    // The rest lands in the posted buffer. The peer stays charged for the
    // owned bytes until the flow ends (forget() refunds them).
    const std::span<std::byte> target = posted_.claim(receive, peer.name, size);
    if (flow.received_bytes != 0)
      std::memcpy(target.data(), flow.target.data(), flow.received_bytes);
    flow.target = target;
    flow.owned.reset();
    flow.posted = receive;
    flow.unexpected = false;
    unexpected_.unreserve(size);
    return true;
  }
  return false;
}

void ReceiveSide::deliver_unposted(IncomingFlow& flow, const Peer& peer) {
  if (message_handler_) {
    if (flow.unexpected) {  // the handler came after the announce
      flow.unexpected = false;
      unexpected_.unreserve(flow.announce.size_bytes);
    }
    IncomingMessage message;
    message.peer = peer.name;
    message.member = peer.control->verified_member();
    message.tag = flow.announce.tag;
    message.group = flow.announce.group;
    message.data = flow.target;
    message_handler_(message);  // may close the peer, and with it this flow
    return;
  }
  if (!flow.unexpected) {
    // The handler went away after the announce: hold it if there is room.
    if (const auto full = unexpected_.reserve(flow.announce.size_bytes)) {
      config_.log("dropping message with tag " + std::to_string(flow.announce.tag) + " from " +
                  peer.name + ": " + *full);
      return;
    }
  }
  flow.unexpected = false;  // the reservation now belongs to the held message
  HeldMessage held;
  held.peer = peer.name;
  held.member = peer.control->verified_member();
  held.tag = flow.announce.tag;
  held.group = flow.announce.group;
  held.bytes = std::move(flow.owned);
  held.size_bytes = flow.announce.size_bytes;
  unexpected_.hold(std::move(held));
}

}  // namespace safs::runtime
