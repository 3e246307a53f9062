// Background streams at the sender (SafsConfig::background_streams): the
// background flows one host sends one receiver, when they need grants, share
// the receiver's one grant for them and one pacer at its rate. The NIC pulls
// whichever of them is ready, so they share the stream's rate as they share
// the NIC. A flow joins when it starts and leaves when it is done; one that
// joins while the stream's grant is valid starts under it, with no blind
// bytes. The grant lasts as long as the stream has flows.
#include <algorithm>

#include "transport/safs/safs_sender_agent.h"
#include "transport/safs/safs_sender_state.h"

namespace safs {

void SafsTransport::SenderAgent::join_background_stream(SenderFlow& flow, TimePs now) {
  FlowState& s = state(flow);
  BackgroundStream& stream = background_streams_[flow.spec.dst];
  stream.members.push_back(flow.spec.id);
  s.on_background_stream = true;
  // Its receiver counts the stream's rate as in effect while the stream has
  // flows: the new flow sends within it, from its first byte.
  if (stream.grant.active(now) && stream.grant.grant().rate_bps >= 1.0) s.unscheduled_limit = 0;
}

// A stream whose last flow is done leaves its receiver's allocation there:
// its grant goes with it, and the next flow starts blind.
void SafsTransport::SenderAgent::leave_background_stream(const SenderFlow& flow) {
  if (!state(flow).on_background_stream) return;
  BackgroundStream& stream = background_streams_[flow.spec.dst];
  std::erase(stream.members, flow.spec.id);
  if (stream.members.empty()) stream.grant = core::GrantHolder{};
}

// As a flow's own gate: paced at the grant while it lasts; before the
// stream's first grant (or once it lapsed before this flow started, so that
// this flow's first packet asks for a new one) the flow waits up to
// first_grant_wait, then falls back to its window at the lowest level.
WindowTransport::SendGate SafsTransport::SenderAgent::stream_gate(const SenderFlow& flow,
                                                                  TimePs now) {
  const SafsConfig& config = transport_.config_;
  const FlowState& s = state(flow);
  const BackgroundStream& stream = background_streams_[flow.spec.dst];
  if (stream.grant.active(now)) {
    if (stream.grant.grant().rate_bps < 1.0) return {false, 0, stream.grant.expires_ps()};
    if (stream.next_send_ps > now) return {false, 0, stream.next_send_ps};
    return {true, stream.grant.grant().priority};
  }
  const bool grant_coming = !stream.grant.held() || stream.grant.expires_ps() <= s.started_ps;
  if (grant_coming && now < s.started_ps + config.first_grant_wait_ps) {
    return {false, 0, s.started_ps + config.first_grant_wait_ps};
  }
  return {true, config.fallback_priority};
}

void SafsTransport::SenderAgent::on_stream_sent(const SenderFlow& flow, const Packet& packet,
                                                TimePs now) {
  BackgroundStream& stream = background_streams_[flow.spec.dst];
  if (!stream.grant.active(now)) return;
  const double rate = stream.grant.grant().rate_bps;
  stream.next_send_ps = std::max(now, stream.next_send_ps) +
                        serialization_ps(packet.wire_bytes, static_cast<std::uint64_t>(rate));
  stream.grant.on_sent(packet.payload_bytes);
}

void SafsTransport::SenderAgent::on_stream_grant(const Packet& packet) {
  const TransportEnv& env = transport_.env();
  const TimePs now = env.sim.now();
  BackgroundStream& stream = background_streams_[static_cast<int>(packet.src_host)];
  if (!stream.grant.accept(safs_header::get_grant(packet), now)) return;  // stale
  const double rate = std::max(1.0, stream.grant.grant().rate_bps);
  stream.next_send_ps = std::min(
      stream.next_send_ps,
      now + serialization_ps(env.mtu_bytes + env.header_bytes, static_cast<std::uint64_t>(rate)));
  for (const std::uint32_t id : stream.members) {
    SenderFlow& flow = *transport_.sender_flow(id);
    // As for a flow's own grant: its window may slow-start up to the
    // granted bandwidth-delay product (twice, for jitter).
    const auto granted_window =
        static_cast<std::uint64_t>(2.0 * rate / 8.0 * ps_to_sec(std::max(flow.srtt_ps, kPsPerUs)));
    flow.cc.ssthresh_bytes = std::max(flow.cc.ssthresh_bytes, granted_window);
    flow.retry_timer->cancel();
    transport_.make_ready(flow);
  }
}

}  // namespace safs
