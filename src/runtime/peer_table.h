// The peers this endpoint talks to: who each is (its address and its Hello),
// its control connection, and what this endpoint holds for it, checked
// against the per-peer limits. Both sides share the table: the send side
// reaches a peer by address, the receive side finds it by the control
// connection its data connections name (SessionCrypto::connection_id()).
// Two endpoints that send to each other at once hold two control
// connections, one each way; each data connection binds to the one its
// flow was announced on.
//
// Control connection lifecycle: opened by whichever side first has a flow
// for the other (connect()) or accepted with a Hello already read (adopt());
// the channel runs the authenticated handshake (control_channel.h). A peer
// is identified (its connection id bound, its data connections accepted, its
// flows heard) only once it proved it holds the job key; one that has not
// within the handshake timeout is closed. A DataOpen or an unreadable frame
// closes the connection as a protocol error; Error with flow 0 closes it on
// the peer's word. Every other message concerns one flow and goes to the
// owner. Closing a peer tells the owner first, so it can end that peer's
// flows.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "runtime/control_channel.h"
#include "runtime/endpoint.h"
#include "runtime/endpoint_config.h"
#include "runtime/event_loop.h"
#include "runtime/overrun_detector.h"
#include "runtime/wire.h"

namespace safs::runtime {

using PeerId = std::uint64_t;  // this endpoint's numbering, from 1

struct Peer {
  PeerId id = 0;
  std::string name;  // host:listen port, once known
  // Whose standing it earns: its verified member name with a roster, else `name`.
  std::string identity;
  std::string job;                  // its member's job in the roster ("" without one)
  std::uint64_t connection_id = 0;  // once authenticated: what its DataOpens name
  std::unique_ptr<ControlChannel> control;
  bool connected = false;            // outgoing: the connect completed
  std::optional<wire::Hello> hello;  // theirs
  bool authenticated = false;        // proved it holds the job key
  std::int64_t since_ns = 0;         // the connection's start (handshake timeout)
  std::uint64_t highest_flow = 0;    // announced by it so far: ids only grow
  std::int64_t last_heard_ns = 0;    // its last control frame (a silent peer fails our flows)
  std::int64_t rtt_ns = 0;           // control connection's smoothed RTT
  // Held for flows from this peer (limited by PeerLimits).
  std::uint32_t incoming_flows = 0;
  std::uint64_t buffer_bytes = 0;  // owned buffers only, not posted ones
  bool demoted = false;            // it ignored its grants
};

// Whether the peer's Hello advertised `capability` (a wire::kCap* bit).
inline bool advertises(const Peer& peer, std::uint32_t capability) {
  return peer.hello && (peer.hello->capabilities & capability) != 0;
}

// What an identity (a member, or host:listen port) has earned, across its
// connections.
struct Standing {
  std::int64_t demoted_until_ns = 0;
  // All its flows' bytes against the whole downlink: no obedient identity
  // exceeds it, however many flows or sessions it opens.
  std::optional<OverrunDetector> downlink_meter;
  std::uint32_t urgent_claims = 0;  // urgent flows announced
  std::uint32_t missed_claims = 0;  // of those, turned ghost or idle
};

// Why a peer's new flow is refused.
struct Refusal {
  wire::ErrorCode code = wire::ErrorCode::kMalformed;
  std::string reason;
};

class PeerTable {
 public:
  // The owner: what the table does not decide itself.
  class Events {
   public:
    // The peer authenticated (data connections naming its connection can bind).
    virtual void on_peer_identified(Peer& peer) = 0;
    // A message about one flow (Announce, Update, Grant, Done, Error).
    virtual void on_flow_message(Peer& peer, const wire::Message& message) = 0;
    // The peer is closing: end its flows. It is still in the table.
    virtual void on_peer_closing(Peer& peer, const std::string& reason) = 0;

   protected:
    ~Events() = default;
  };

  // `local` is the Hello this endpoint sends every peer (each connection
  // with a fresh nonce); `keys` what the handshake proves and checks.
  PeerTable(EventLoop& loop, const EndpointConfig& config, wire::Hello local, ChannelKeys keys,
            Events& events);

  Peer* find(PeerId id);
  const Peer* find(PeerId id) const;
  // A peer known to be here (every flow's peer is, until the flow ends).
  Peer& at(PeerId id) { return peers_.at(id); }
  Peer* find_by_connection(std::uint64_t connection_id);
  // The peer at `address`, connecting to it first if need be; nullptr (and
  // `error`) when the connect fails at once or the address is not allowed.
  Peer* connect(const PeerAddress& address, std::string& error);
  // An accepted control connection whose Hello was read, with what came after it.
  void adopt(int fd, const wire::Hello& hello, std::span<const std::uint8_t> early_bytes);

  void send(Peer& peer, const wire::Message& message);
  void close(PeerId id, const std::string& reason, bool protocol_error);

  // The per-peer limits and the endpoint's memory budget on a new incoming
  // flow of `size_bytes`;
  // `buffered`: no posted buffer takes it, so this endpoint holds it.
  std::optional<Refusal> refusal(const Peer& peer, std::uint64_t size_bytes, bool buffered) const;
  void charge(Peer& peer, std::uint64_t buffered_bytes);
  void refund(PeerId id, std::uint64_t buffered_bytes);  // the peer may be gone

  // Makes room by closing the oldest unauthenticated peer; false if none.
  bool evict_unauthenticated();
  // Closes the peers that have not authenticated within the handshake
  // timeout, and those stopped inside a frame for the partial-frame timeout.
  void expire(std::int64_t now_ns);
  void count_authentication_failure() { ++stats_.authentication_failures; }
  // The standing of the peer's identity; it outlives the peer.
  Standing& standing(const Peer& peer) { return standing_[peer.identity]; }
  void add_stats(EndpointStats& stats) const;

 private:
  wire::Hello fresh_hello() const;

  Peer& add(std::string name);
  void on_control_event(PeerId id, std::uint32_t events);
  void dispatch(Peer& peer, const wire::Message& message);

  EventLoop& loop_;
  const EndpointConfig& config_;
  const wire::Hello local_;
  const ChannelKeys keys_;
  Events& events_;
  PeerId next_peer_ = 1;
  std::uint64_t buffer_bytes_ = 0;  // held for all peers' flows (the endpoint's budget)
  std::map<PeerId, Peer> peers_;
  std::map<std::string, PeerId> peer_by_name_;
  std::map<std::uint64_t, PeerId> peer_by_connection_;
  std::map<std::string, Standing> standing_;  // by identity
  EndpointStats stats_;  // protocol and authentication errors, closed peers' control bytes
};

}  // namespace safs::runtime
