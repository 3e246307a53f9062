// The endpoint behind Endpoint's interface: one event loop driving
//   Acceptor     the listening socket and connections not yet identified,
//   PeerTable    the peers, their control connections and per-peer state,
//   SendSide     outgoing flows (announce, pacing at the grant, risk),
//   ReceiveSide  incoming flows (scheduler, grants, posted receives, delivery).
// This class wires them together: it routes each identified connection and
// each flow's control message to the side it concerns, ends a closing peer's
// flows on both sides, and runs the tick.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runtime/acceptor.h"
#include "runtime/completion_signal.h"
#include "runtime/endpoint.h"
#include "runtime/event_loop.h"
#include "runtime/metrics.h"
#include "runtime/peer_table.h"
#include "runtime/receive_side.h"
#include "runtime/send_side.h"
#include "runtime/wire.h"

namespace safs::runtime {

class EndpointCore final : private Acceptor::Events, private PeerTable::Events {
 public:
  explicit EndpointCore(EndpointConfig config);
  ~EndpointCore();
  EndpointCore(const EndpointCore&) = delete;
  EndpointCore& operator=(const EndpointCore&) = delete;

  PeerAddress address() const { return acceptor_.address(); }
  std::optional<PeerAddress> metrics_address() const {
    return metrics_ ? std::optional(metrics_->address()) : std::nullopt;
  }
  SendSide& send_side() { return send_; }
  const SendSide& send_side() const { return send_; }
  ReceiveSide& receive_side() { return receive_; }
  const ReceiveSide& receive_side() const { return receive_; }

  void progress(std::int64_t max_wait_ns);
  void request_stop() {
    stop_ = true;
    loop_.post([] {});
  }
  bool stop_requested() const { return stop_; }
  void clear_stop() { stop_ = false; }
  EventLoop& loop() { return loop_; }
  int completion_fd() const { return completions_.fd(); }
  EndpointStats stats() const;

 private:
  // Acceptor::Events
  void on_control_connection(UnboundConnection& connection, const wire::Hello& hello) override;
  void on_data_connection(UnboundConnection& connection) override;
  bool on_out_of_descriptors() override { return peers_.evict_unauthenticated(); }
  // PeerTable::Events
  void on_peer_identified(Peer& peer) override;
  void on_flow_message(Peer& peer, const wire::Message& message) override;
  void on_peer_closing(Peer& peer, const std::string& reason) override;

  std::int64_t next_wake_ns(std::int64_t now_ns) const;
  void on_tick(std::int64_t now_ns);

  // Declared in construction order: each part refers to those above it.
  EndpointConfig config_;
  EventLoop loop_;
  CompletionSignal completions_;
  Acceptor acceptor_;
  PeerTable peers_;
  SendSide send_;
  ReceiveSide receive_;
  std::unique_ptr<MetricsServer> metrics_;
  std::atomic<bool> stop_ = false;
  std::int64_t last_tick_ns_ = 0;
};

}  // namespace safs::runtime
