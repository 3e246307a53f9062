// Flows that follow one another on one connection (ContentionFallback::
// one_connection; docs/runtime.md, "Contention fallback").
//
// On a path someone else's traffic fills, flows go unpaced, under TCP's
// congestion control alone. Started together they would each open a
// connection (the one in use is busy), and each new connection starts from
// TCP's initial window behind the competitor's full queue, doubling it once
// per round trip of that queue. So a flow that starts while an earlier flow
// to the same receiver, due no later, is still writing on an unpaced
// connection waits: it is not announced yet, and when that flow has written
// its last byte the connection passes to the waiting flow due first, which
// announces itself and writes its DataOpen right behind those bytes. A flow
// that starts while a connection's flow has written everything and awaits
// its DONE (a round trip of the queue) takes that connection at once. Only
// to receivers that advertise wire::kCapDataFollow: they read each first
// frame exactly and keep a connection whose next DataOpen is there. One
// that closed the connection before that DataOpen came loses the bytes
// behind it, and the flow starts over on a new connection (on_data_event).
// The flow before completes with its DONE on the control connection.
#include <algorithm>

#include "runtime/clock.h"
#include "runtime/send_side.h"

namespace safs::runtime {
namespace {

// A flow before `flow` on one of the path's unpaced connections: one that
// has written all its bytes (`written`), or one still writing them.
bool on_path_before(const OutgoingFlow& before, const OutgoingFlow& flow, bool written) {
  if (before.id == flow.id || before.peer != flow.peer || before.state != FlowState::kPending ||
      before.fd < 0 || !before.keeps_connection_unpaced) {
    return false;
  }
  const bool all_written = before.preamble_sent == before.preamble.size() &&
                           !before.preamble.empty() && before.sent_bytes == before.data.size();
  return all_written == written;
}

}  // namespace

bool SendSide::may_follow(const OutgoingFlow& flow, std::int64_t now_ns) const {
  if (!config_.contention_fallback.one_connection || !flow.keeps_connection_unpaced ||
      flow.on_plan || !peer_reuses_connections(flow.peer) || !path_contended(flow.peer, now_ns)) {
    return false;
  }
  const Peer* peer = peers_.find(flow.peer);
  return peer != nullptr && advertises(*peer, wire::kCapDataFollow);
}

OutgoingFlow* SendSide::written_out_before(const OutgoingFlow& flow) {
  for (auto& [id, before] : outgoing_) {
    if (on_path_before(before, flow, /*written=*/true)) return &before;
  }
  return nullptr;
}

bool SendSide::waits_to_follow(const OutgoingFlow& flow, std::int64_t now_ns) const {
  // Only an urgent flow with a deadline waits, and only behind one due no
  // later: a flow without one is not starved by a stream of urgent ones. It
  // waits while its receiver pauses the flow ahead too: a receiver pauses a
  // flow for flows due before it (often the bytes before it, still crossing
  // the queue), and would pause the later ones as well.
  if (!flow.hint.urgent || flow.hint.deadline_ns == kNoDeadlineNs || !may_follow(flow, now_ns)) {
    return false;
  }
  return std::any_of(outgoing_.begin(), outgoing_.end(), [&](const auto& entry) {
    const OutgoingFlow& ahead = entry.second;
    return on_path_before(ahead, flow, /*written=*/false) &&
           ahead.hint.deadline_ns <= flow.hint.deadline_ns;
  });
}

void SendSide::hand_connection(OutgoingFlow& from, OutgoingFlow& to, Peer& peer,
                               std::int64_t now_ns) {
  loop_.remove(from.fd);
  const DataConnectionPool::Connection connection{from.fd, from.pacer->kernel_rate_set()};
  from.fd = -1;  // its bytes are out: its DONE completes it
  to.awaits_connection = false;
  announce(to, peer, now_ns);
  ++stats_.data_connections_reused;
  ++stats_.flows_followed;
  to.reused_connection = true;  // a close before its bytes start it over on a new one
  attach_data_connection(to, connection, /*connected=*/true);
}

void SendSide::pass_connection_on(OutgoingFlow& flow, std::int64_t now_ns) {
  if (flow.state != FlowState::kPending || flow.fd < 0 || !flow.keeps_connection_unpaced ||
      flow.preamble_sent != flow.preamble.size()) {
    return;
  }
  // The waiting flow due first; the one sent first among equals.
  OutgoingFlow* next = nullptr;
  for (auto& [id, waiting] : outgoing_) {
    if (!waiting.awaits_connection || waiting.peer != flow.peer ||
        waiting.state != FlowState::kPending) {
      continue;
    }
    if (next == nullptr || waiting.hint.deadline_ns < next->hint.deadline_ns) next = &waiting;
  }
  if (Peer* peer = peers_.find(flow.peer); next != nullptr && peer != nullptr) {
    hand_connection(flow, *next, *peer, now_ns);
  }
}

void SendSide::start_flows_left_waiting(std::int64_t now_ns) {
  for (auto& [id, flow] : outgoing_) {
    if (!flow.awaits_connection || flow.state != FlowState::kPending) continue;
    if (waits_to_follow(flow, now_ns)) continue;
    Peer* peer = peers_.find(flow.peer);
    if (peer == nullptr) continue;  // fail_flows_to() fails it
    flow.awaits_connection = false;
    start_flow(flow, *peer, now_ns);
  }
}

}  // namespace safs::runtime
