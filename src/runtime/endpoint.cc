#include "runtime/endpoint.h"

#include "runtime/clock.h"
#include "runtime/endpoint_core.h"

namespace safs::runtime {

Endpoint::Endpoint(EndpointConfig config)
    : core_(std::make_unique<EndpointCore>(std::move(config))) {}
Endpoint::~Endpoint() = default;

PeerAddress Endpoint::address() const { return core_->address(); }

FlowHandle Endpoint::send(const PeerAddress& peer, std::span<const std::byte> data,
                          const FlowHint& hint) {
  return core_->send(peer, data, hint);
}
bool Endpoint::update_hint(FlowHandle flow, const FlowHint& hint) {
  return core_->update_hint(flow, hint);
}
FlowStatus Endpoint::test(FlowHandle flow) const { return core_->test(flow); }

FlowStatus Endpoint::wait(FlowHandle flow, std::int64_t timeout_ns) {
  const std::int64_t until = monotonic_ns() + timeout_ns;
  for (;;) {
    FlowStatus status = core_->test(flow);
    const std::int64_t now = monotonic_ns();
    if (status.state != FlowState::kPending || now >= until) return status;
    core_->progress(until - now);
  }
}

void Endpoint::release(FlowHandle flow) { core_->release(flow); }
void Endpoint::on_risk(std::function<void(const FlowRisk&)> handler) {
  core_->risk_handler = std::move(handler);
}
void Endpoint::on_message(std::function<void(const IncomingMessage&)> handler) {
  core_->message_handler = std::move(handler);
}
ReceiveHandle Endpoint::post_receive(std::uint64_t tag, std::span<std::byte> buffer) {
  return core_->post_receive(tag, buffer);
}
ReceiveStatus Endpoint::test_receive(ReceiveHandle receive) const {
  return core_->test_receive(receive);
}

void Endpoint::progress(std::int64_t max_wait_ns) { core_->progress(max_wait_ns); }

void Endpoint::run() {
  while (!core_->stop_requested()) core_->progress(kNsPerSecond);
  core_->clear_stop();
}

void Endpoint::stop() { core_->request_stop(); }
void Endpoint::post(std::function<void()> task) { core_->loop().post(std::move(task)); }
EndpointStats Endpoint::stats() const { return core_->stats(); }

}  // namespace safs::runtime
