// The endpoint's state and machinery, behind Endpoint's interface. Split by
// job: endpoint_core.cc (listening, peers, control messages, the loop),
// send_side.cc (outgoing flows: data connections, pacing, leases, risk),
// receive_side.cc (incoming flows: limits, the scheduler, grants,
// enforcement, delivery).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/grant.h"
#include "core/receiver_scheduler.h"
#include "runtime/control_channel.h"
#include "runtime/endpoint.h"
#include "runtime/event_loop.h"
#include "runtime/overrun_detector.h"
#include "runtime/pacer.h"
#include "runtime/token_bucket.h"
#include "runtime/wire.h"

namespace safs::runtime {

using PeerId = std::uint64_t;

struct Peer {
  PeerId id = 0;
  std::string name;  // host:listen port, once known
  std::unique_ptr<ControlChannel> control;
  bool connected = false;            // outgoing: the connect completed
  std::optional<wire::Hello> hello;  // theirs
  std::int64_t rtt_ns = 0;           // control connection's smoothed RTT
  // Receiving from this peer.
  std::uint32_t incoming_flows = 0;
  std::uint64_t buffer_bytes = 0;
  bool demoted = false;
};

struct OutgoingFlow {
  FlowHandle id = 0;
  PeerId peer = 0;
  PeerAddress address;
  std::span<const std::byte> data;
  FlowHint hint;
  int fd = -1;
  bool connected = false;
  std::vector<std::uint8_t> preamble;  // the DataOpen frame
  std::size_t preamble_sent = 0;
  std::uint64_t sent_bytes = 0;
  std::unique_ptr<Pacer> pacer;
  core::GrantHolder grant;
  std::int64_t started_ns = 0;
  bool writable = false;  // EPOLLOUT is wanted
  FlowState state = FlowState::kPending;
  std::string error;
  bool at_risk = false;
};

struct PostedReceive {
  std::uint64_t tag = 0;
  std::span<std::byte> buffer;
  bool matched = false;
  ReceiveStatus status;
};

struct IncomingFlow {
  core::FlowId id = 0;  // the scheduler's id (this endpoint's numbering)
  PeerId peer = 0;
  wire::Announce announce;
  int fd = -1;
  std::unique_ptr<std::byte[]> owned;  // when no posted buffer took it
  std::uint64_t owned_bytes = 0;
  std::span<std::byte> target;
  ReceiveHandle posted = 0;
  std::uint64_t received_bytes = 0;
  bool granted = false;
  double granted_bps = 0;
  OverrunDetector overrun;
  bool throttled = false;  // reads held to the grant (demoted sender)
  TokenBucket read_bucket;
  bool reading = true;  // EPOLLIN registered
};

// An accepted connection whose first frame has not said what it is, or a
// data connection waiting for its flow's announce.
struct UnboundConnection {
  int fd = -1;
  std::vector<std::uint8_t> bytes;
  std::optional<wire::DataOpen> data_open;
  std::int64_t since_ns = 0;
};

class EndpointCore {
 public:
  explicit EndpointCore(EndpointConfig config);
  ~EndpointCore();

  // Endpoint's interface.
  PeerAddress address() const { return address_; }
  FlowHandle send(const PeerAddress& peer, std::span<const std::byte> data, const FlowHint& hint);
  bool update_hint(FlowHandle flow, const FlowHint& hint);
  FlowStatus test(FlowHandle flow) const;
  void release(FlowHandle flow);
  ReceiveHandle post_receive(std::uint64_t tag, std::span<std::byte> buffer);
  ReceiveStatus test_receive(ReceiveHandle receive) const;
  void progress(std::int64_t max_wait_ns);
  void request_stop() {
    stop_ = true;
    loop_.post([] {});
  }
  bool stop_requested() const { return stop_; }
  void clear_stop() { stop_ = false; }
  EventLoop& loop() { return loop_; }
  EndpointStats stats() const;

  std::function<void(const FlowRisk&)> risk_handler;
  std::function<void(const IncomingMessage&)> message_handler;

 private:
  // endpoint_core.cc
  void log(const std::string& text) const;
  void on_accept();
  void on_unbound_readable(int fd);
  void bind_control(UnboundConnection& connection, const wire::Hello& hello);
  Peer* peer_for(const PeerAddress& address, std::string& error);
  void on_control_event(PeerId peer, std::uint32_t events);
  void dispatch(Peer& peer, const wire::Message& message);
  void send_control(Peer& peer, const wire::Message& message);
  void close_peer(PeerId peer, const std::string& reason, bool protocol_error);
  wire::Hello my_hello() const;
  void on_tick(std::int64_t now_ns);
  std::int64_t next_wake_ns(std::int64_t now_ns) const;

  // send_side.cc
  void start_data_connection(OutgoingFlow& flow);
  void on_data_out_event(FlowHandle flow, std::uint32_t events);
  void pump(OutgoingFlow& flow, std::int64_t now_ns);
  double target_rate_bps(OutgoingFlow& flow, std::int64_t now_ns) const;
  void apply_rate(OutgoingFlow& flow, std::int64_t now_ns);
  void on_grant(Peer& peer, const wire::Grant& grant);
  void on_done(Peer& peer, const wire::Done& done);
  void on_flow_error(Peer& peer, const wire::Error& error);
  void fail_outgoing(OutgoingFlow& flow, const std::string& reason);
  void finish_outgoing(OutgoingFlow& flow);
  void check_risk(OutgoingFlow& flow, std::int64_t now_ns);
  void send_tick(std::int64_t now_ns);
  wire::Announce announce_for(const OutgoingFlow& flow, std::int64_t now_ns) const;

  // receive_side.cc
  void on_announce(Peer& peer, const wire::Announce& announce);
  void on_update(Peer& peer, const wire::Update& update);
  void bind_data(UnboundConnection& connection);
  bool try_bind_parked(PeerId peer);
  void on_data_in_event(core::FlowId flow, std::uint32_t events);
  void read_data(IncomingFlow& flow, std::int64_t now_ns);
  void complete_incoming(IncomingFlow& flow);
  void drop_incoming(IncomingFlow& flow, const std::string& reason);
  void demote(Peer& peer, std::int64_t now_ns);
  core::SemanticFlow semantic_flow(const IncomingFlow& flow, const Peer& peer,
                                   std::int64_t slack_ns, std::int64_t now_ns) const;
  void receive_tick(std::int64_t now_ns);
  void send_grants(const std::vector<core::Grant>& grants, std::int64_t now_ns);

  EndpointConfig config_;
  EventLoop loop_;
  int listen_fd_ = -1;
  PeerAddress address_;
  std::uint64_t session_ = 0;
  std::atomic<bool> stop_ = false;
  std::int64_t last_tick_ns_ = 0;

  PeerId next_peer_ = 1;
  std::map<PeerId, Peer> peers_;
  std::map<std::string, PeerId> peer_by_name_;
  std::map<std::uint64_t, PeerId> peer_by_session_;
  std::map<int, UnboundConnection> unbound_;

  FlowHandle next_flow_ = 1;
  std::map<FlowHandle, OutgoingFlow> outgoing_;

  core::ReceiverScheduler scheduler_;
  core::FlowId next_incoming_ = 1;
  std::map<core::FlowId, IncomingFlow> incoming_;
  std::map<std::pair<PeerId, std::uint64_t>, core::FlowId> incoming_by_remote_;
  ReceiveHandle next_receive_ = 1;
  std::map<ReceiveHandle, PostedReceive> posted_;

  EndpointStats stats_;
};

}  // namespace safs::runtime
