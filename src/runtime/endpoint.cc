#include "runtime/endpoint.h"

#include "runtime/clock.h"
#include "runtime/endpoint_core.h"

namespace safs::runtime {

FlowHint FlowHint::urgent_within(std::int64_t slack_ns, std::uint64_t tag) {
  FlowHint hint;
  hint.deadline_ns = monotonic_ns() + slack_ns;
  hint.urgent = true;
  hint.tag = tag;
  return hint;
}

FlowHint FlowHint::background(std::uint64_t tag) {
  FlowHint hint;
  hint.tag = tag;
  return hint;
}

Endpoint::Endpoint(EndpointConfig config)
    : core_(std::make_unique<EndpointCore>(std::move(config))) {}
Endpoint::~Endpoint() = default;

PeerAddress Endpoint::address() const { return core_->address(); }
std::optional<PeerAddress> Endpoint::metrics_address() const { return core_->metrics_address(); }

FlowHandle Endpoint::send(const PeerAddress& peer, std::span<const std::byte> data,
                          const FlowHint& hint) {
  return core_->send_side().send(peer, data, hint);
}
bool Endpoint::update_hint(FlowHandle flow, const FlowHint& hint) {
  return core_->send_side().update_hint(flow, hint);
}
bool Endpoint::announce_ahead(const PeerAddress& peer, std::uint64_t size_bytes,
                              std::int64_t start_ns, const FlowHint& hint, std::string* why_not) {
  return core_->send_side().announce_ahead(peer, size_bytes, start_ns, hint, why_not);
}
FlowStatus Endpoint::test(FlowHandle flow) const { return core_->send_side().test(flow); }

FlowStatus Endpoint::wait(FlowHandle flow, std::int64_t timeout_ns) {
  const std::int64_t until = monotonic_ns() + timeout_ns;
  for (;;) {
    FlowStatus status = core_->send_side().test(flow);
    const std::int64_t now = monotonic_ns();
    if (status.state != FlowState::kPending || now >= until) return status;
    core_->progress(until - now);
  }
}

void Endpoint::release(FlowHandle flow) { core_->send_side().release(flow); }
void Endpoint::on_risk(std::function<void(const FlowRisk&)> handler) {
  core_->send_side().on_risk(std::move(handler));
}
void Endpoint::on_message(std::function<void(const IncomingMessage&)> handler) {
  core_->receive_side().on_message(std::move(handler));
}
ReceiveHandle Endpoint::post_receive(std::uint64_t tag, std::span<std::byte> buffer,
                                     const std::optional<PeerAddress>& from) {
  return core_->receive_side().post_receive(tag, buffer, from);
}
bool Endpoint::consumer_waits(ReceiveHandle receive) {
  return core_->receive_side().consumer_waits(receive);
}
ReceiveStatus Endpoint::test_receive(ReceiveHandle receive) const {
  return core_->receive_side().test_receive(receive);
}

void Endpoint::progress(std::int64_t max_wait_ns) { core_->progress(max_wait_ns); }

void Endpoint::run() {
  while (!core_->stop_requested()) core_->progress(kNsPerSecond);
  core_->clear_stop();
}

void Endpoint::stop() { core_->request_stop(); }
void Endpoint::post(std::function<void()> task) { core_->loop().post(std::move(task)); }
EndpointStats Endpoint::stats() const { return core_->stats(); }
int Endpoint::completion_fd() const { return core_->completion_fd(); }

}  // namespace safs::runtime
