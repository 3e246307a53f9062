#include "transport/homa/homa_transport.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "engine/timer.h"
#include "transport/common/host_endpoints.h"
#include "transport/common/new_packet.h"
#include "transport/common/segment_tracker.h"
#include "transport/homa/homa_header.h"

namespace safs {

namespace {

// Every control packet travels at the top level (module protocol.md).
constexpr std::uint8_t kControlPriority = kTopPriority;

// Sender SRPT order: bytes left to transmit, then the older message.
using ReadyKey = std::pair<std::uint64_t, std::uint32_t>;
// Receiver SRPT order: bytes left to receive, then the older message
// (module homa_grant_outranks), then the id for a total order.
using GrantKey = std::tuple<std::uint64_t, TimePs, std::uint32_t>;

struct Retransmit {
  std::uint32_t id;
  std::uint64_t offset;
};

}  // namespace

// What both sides' entries hold.
struct HomaTransport::MessageSide {
  FlowSpec spec;
  std::uint64_t control_packets = 0;  // scheduling control this side sent (not ACKs)
};

struct HomaTransport::OutgoingMessage : MessageSide {
  Route data_route;               // sender -> receiver
  std::uint64_t unsched = 0;      // bytes it may send before any grant
  std::uint64_t next_offset = 0;  // first byte never transmitted
  std::uint64_t tx_granted = 0;   // may transmit bytes below this
  std::uint8_t unsched_priority = 0;
  std::uint8_t sched_priority = 0;  // from the last GRANT (or RESEND)
  bool acked = false;
  bool in_ready = false;
  ReadyKey ready_key{};
  // Segments queued for retransmission and not yet sent: as many as the
  // RESENDs ask for at once, never the message's size.
  std::set<std::uint64_t> retx_queued;
  std::optional<Timer> probe_timer;
  std::uint64_t data_packets = 0;  // sent, including retransmissions
  bool retiring = false;           // both sides done: waits in retiring_ to be freed

  std::uint64_t remaining_to_send() const { return spec.size_bytes - next_offset; }
};

// Only what DATA headers told the receiver (the entry exists from the start
// so that a NEED_ACK for a message never heard of can be answered UNKNOWN).
struct HomaTransport::IncomingMessage : MessageSide {
  Route reverse_route;    // receiver -> sender
  bool rx_known = false;  // some packet has arrived
  bool complete = false;
  std::uint64_t length = 0;
  SegmentTracker received;
  std::uint64_t rx_granted = 0;   // grant offset sent (or unscheduled bytes)
  std::uint64_t rx_incoming = 0;  // this message's share of Host::total_incoming
  std::uint64_t recv_end = 0;     // end of the highest byte received
  TimePs recv_end_sent_ps = 0;    // when the packet that ends there was sent
  TimePs birth_ps = 0;
  std::uint8_t rx_priority = 0;  // scheduled level at its last ranking
  // The level each granted range was assigned: (end offset, level), in
  // offset order; ranges below the first missing byte are dropped.
  std::deque<std::pair<std::uint64_t, std::uint8_t>> rx_levels;
  TimePs rx_last_progress = 0;  // last packet of it (DATA, BUSY) or grant sent
  std::array<std::uint64_t, kNumPriorities> max_end_at_level{};  // highest byte received per level
  bool in_grantable = false;
  GrantKey grant_key{};
  std::optional<Timer> resend_timer;
};

class HomaTransport::Host final : public PacketSink, public PacketSource {
 public:
  Host(HomaTransport& transport, int id) : transport_(transport), id_(id) {}
  void receive(Packet& packet) override { transport_.on_packet(*this, packet); }
  Packet* pull_packet() override { return transport_.next_packet(*this); }
  // update_ready and the resend queue wake the NIC when they add to these.
  bool idle() const override { return retransmits.empty() && ready.empty(); }
  int id() const { return id_; }

  // Sender: messages with bytes they may transmit now, fewest left first, and
  // segments a RESEND or UNKNOWN asked for again (sent first, in order).
  std::set<ReadyKey> ready;
  std::deque<Retransmit> retransmits;

  // Receiver: messages that still need grants, fewest bytes remaining first.
  std::set<GrantKey> grantable;
  std::uint64_t total_incoming = 0;                   // granted or unscheduled, not yet received
  std::array<TimePs, kNumPriorities> last_data_ps{};  // last DATA arrival per level
  std::array<TimePs, kNumPriorities> max_sent_data_ps{};  // latest send time of DATA received
  std::int64_t nonfifo_left = 0;  // SRPT bytes to grant before the next FIFO grant

 private:
  HomaTransport& transport_;
  int id_;
};

HomaTransport::HomaTransport(TransportEnv& env, const HomaConfig& config)
    : env_(env), config_(config) {
  if (config_.overcommitment == 0) throw std::invalid_argument("homa: overcommitment must be >= 1");
  if (config_.unsched_levels < 1 || config_.unsched_levels > 4) {
    throw std::invalid_argument("homa: unsched_levels must be 1..4");
  }
  hosts_ = attach_host_endpoints<Host>(env_, *this);

  // RTTbytes: what the sender can transmit while a full data packet crosses
  // the longest path and a grant returns (module: "the time it takes to send a
  // full-size data packet and receive back a grant"), in whole packets. Host 0
  // to the last host is the longest path in every topology builder here.
  rtt_bytes_ = config_.rtt_bytes;
  if (rtt_bytes_ == 0) {
    const int last = env_.net.num_hosts() - 1;
    std::uint64_t packets = 1;
    if (last > 0) {
      const Route out = env_.net.route(0, last, 0);
      const Route back = env_.net.route(last, 0, 0);
      const std::uint64_t full = std::uint64_t{env_.mtu_bytes} + env_.header_bytes;
      const TimePs rtt = out.packet_latency_ps(full) + back.packet_latency_ps(env_.header_bytes);
      const TimePs per_packet = serialization_ps(full, out.rate_bps.front());
      packets = static_cast<std::uint64_t>((rtt + per_packet - 1) / per_packet);
    }
    rtt_bytes_ = packets * env_.mtu_bytes;
  }
  unsched_bytes_ =
      round_to_packets(config_.unsched_bytes != 0 ? config_.unsched_bytes : rtt_bytes_);
  grant_window_ = config_.grant_window_bytes != 0 ? config_.grant_window_bytes : rtt_bytes_;
  max_incoming_ = config_.max_incoming_bytes != 0 ? config_.max_incoming_bytes
                                                  : config_.overcommitment * rtt_bytes_;
  max_sched_prio_ = kTopPriority - config_.unsched_levels;
  // Module homa_incoming_sysctl_changed: grant_nonfifo = increment / fraction - increment.
  const double fraction = std::min(config_.grant_fifo_fraction, 0.5);
  if (fraction > 0 && config_.fifo_grant_increment > 0) {
    const double inc = static_cast<double>(config_.fifo_grant_increment);
    grant_nonfifo_ = static_cast<std::int64_t>(inc / fraction - inc);
    grant_nonfifo_ = std::max<std::int64_t>(grant_nonfifo_, 1);
  }
  for (const auto& host : hosts_) host->nonfifo_left = grant_nonfifo_;
}

HomaTransport::~HomaTransport() = default;

std::uint64_t HomaTransport::round_to_packets(std::uint64_t bytes) const {
  const std::uint64_t mtu = env_.mtu_bytes;
  return (bytes + mtu - 1) / mtu * mtu;
}

std::uint8_t HomaTransport::unsched_priority(std::uint64_t length) const {
  for (int i = 0; i + 1 < config_.unsched_levels; ++i) {
    if (length <= config_.unsched_cutoffs[static_cast<std::size_t>(i)]) {
      return static_cast<std::uint8_t>(kTopPriority - i);
    }
  }
  return static_cast<std::uint8_t>(kNumPriorities - config_.unsched_levels);
}

void HomaTransport::start_flow(const FlowSpec& spec) {
  if (spec.size_bytes == 0) {  // nothing to carry: complete on arrival of the request
    env_.observer.on_flow_complete(spec, env_.sim.now());
    return;
  }
  const auto sides = add_flow(env_.net, spec, outgoing_, incoming_);
  OutgoingMessage& m = sides.sender;
  IncomingMessage& in = sides.receiver;
  m.unsched = std::min(spec.size_bytes, unsched_bytes_);
  m.tx_granted = m.unsched;
  m.unsched_priority = unsched_priority(spec.size_bytes);
  m.sched_priority = 0;
  m.probe_timer.emplace(env_.sim, [this, &m] { on_probe_timer(m); });
  in.resend_timer.emplace(env_.sim, [this, &in] { on_resend_timer(in); });
  note_sender_activity(m);
  update_ready(m);
}

std::uint64_t HomaTransport::delivered_bytes(std::uint32_t flow_id) const {
  const IncomingMessage* m = incoming_.find(flow_id);
  return m != nullptr && m->rx_known ? m->received.delivered_bytes() : 0;
}

FlowCounters HomaTransport::flow_counters(std::uint32_t flow_id) const {
  const OutgoingMessage* out = outgoing_.find(flow_id);
  const IncomingMessage* in = incoming_.find(flow_id);
  if (out == nullptr || in == nullptr) return {};
  return {out->data_packets, out->control_packets + in->control_packets};
}

std::uint64_t HomaTransport::receiver_granted_bytes(std::uint32_t flow_id) const {
  const IncomingMessage* m = incoming_.find(flow_id);
  return m != nullptr && m->rx_known ? m->rx_granted : 0;
}

// ---------------------------------------------------------------- sender --

bool HomaTransport::sendable(const OutgoingMessage& m) const {
  return !m.acked && m.next_offset < m.tx_granted;
}

// Keeps the message in its host's SRPT set exactly when it may transmit, under
// its current key; wakes the NIC when it joins.
void HomaTransport::update_ready(OutgoingMessage& m) {
  Host& host = *hosts_[static_cast<std::size_t>(m.spec.src)];
  const bool should = sendable(m);
  const ReadyKey key{m.remaining_to_send(), m.spec.id};
  if (m.in_ready && (!should || key != m.ready_key)) {
    host.ready.erase(m.ready_key);
    m.in_ready = false;
  }
  if (should && !m.in_ready) {
    host.ready.insert(key);
    m.ready_key = key;
    m.in_ready = true;
    env_.net.nic(host.id()).wake();
  }
}

// The NIC is free: retransmissions first (the module sends them at once),
// then the sendable message with the fewest bytes left to transmit.
Packet* HomaTransport::next_packet(Host& host) {
  while (!host.retransmits.empty()) {
    const Retransmit r = host.retransmits.front();
    host.retransmits.pop_front();
    OutgoingMessage& m = *outgoing_.find(r.id);
    const std::uint64_t index = r.offset / env_.mtu_bytes;
    m.retx_queued.erase(index);
    if (m.acked) continue;
    ++stats_.retransmissions;
    return build_data(m, r.offset);
  }
  if (host.ready.empty()) return nullptr;
  OutgoingMessage& m = *outgoing_.find(host.ready.begin()->second);
  const std::uint64_t offset = m.next_offset;
  m.next_offset += std::min<std::uint64_t>(env_.mtu_bytes, m.spec.size_bytes - offset);
  Packet* packet = build_data(m, offset);
  update_ready(m);
  note_sender_activity(m);
  return packet;
}

Packet* HomaTransport::build_data(OutgoingMessage& m, std::uint64_t offset) {
  Packet& p = new_pulled_packet(env_, m.spec, m.data_route, PacketKind::kData, homa_header::kData);
  p.priority = offset < m.unsched ? m.unsched_priority : m.sched_priority;
  p.seq = offset;
  p.payload_bytes = static_cast<std::uint32_t>(
      std::min<std::uint64_t>(env_.mtu_bytes, m.spec.size_bytes - offset));
  p.wire_bytes = p.payload_bytes + env_.header_bytes;
  homa_header::put_data(p, {m.spec.size_bytes, m.unsched});
  ++stats_.data_packets;
  ++m.data_packets;
  return &p;
}

void HomaTransport::queue_retransmit(OutgoingMessage& m, std::uint64_t begin, std::uint64_t end) {
  if (begin >= end || m.acked) return;
  const std::uint64_t mtu = env_.mtu_bytes;
  const std::uint64_t segments = (m.spec.size_bytes + mtu - 1) / mtu;
  Host& host = *hosts_[static_cast<std::size_t>(m.spec.src)];
  bool queued = false;
  for (std::uint64_t i = begin / mtu; i < segments && i * mtu < end; ++i) {
    if (!m.retx_queued.insert(i).second) continue;  // already queued
    host.retransmits.push_back({m.spec.id, i * mtu});
    queued = true;
  }
  if (queued) env_.net.nic(host.id()).wake();
}

void HomaTransport::apply_grant(OutgoingMessage& m, std::uint64_t offset, std::uint8_t priority) {
  if (m.acked) return;
  m.tx_granted = std::max(m.tx_granted, std::min(offset, m.spec.size_bytes));
  m.sched_priority = priority;
  update_ready(m);
}

// Sender silence is measured from its last transmission or last packet heard
// for the message. Re-arming later costs nothing (engine/timer.h).
void HomaTransport::note_sender_activity(OutgoingMessage& m) {
  if (!m.acked) m.probe_timer->arm_at(env_.sim.now() + config_.sender_probe_ps);
}

void HomaTransport::on_probe_timer(OutgoingMessage& m) {
  if (m.acked) return;
  if (sendable(m)) {  // it is this sender that is busy (with shorter messages)
    m.probe_timer->arm_in(config_.sender_probe_ps);
    return;
  }
  ++stats_.timeouts;
  ++probes_;
  send_control(m, new_control(m, homa_header::kNeedAck));
  m.probe_timer->arm_in(config_.sender_probe_ps);
}

// -------------------------------------------------------------- receiver --

bool HomaTransport::expecting(const IncomingMessage& m) const {
  return m.rx_known && !m.complete && m.received.delivered_bytes() < m.rx_granted;
}

// The receiver times out only while it expects granted (or unscheduled) data
// (module homa_timer / protocol.md); any packet of the message restarts it.
void HomaTransport::arm_resend(IncomingMessage& m) {
  if (expecting(m)) {
    m.resend_timer->arm_at(env_.sim.now() + config_.resend_after_ps);
  } else {
    m.resend_timer->cancel();
  }
}

// The level the receiver granted the byte at `offset` at.
int HomaTransport::granted_level(const IncomingMessage& m, std::uint64_t offset) const {
  for (const auto& [end, level] : m.rx_levels) {
    if (offset < end) return level;
  }
  return m.rx_levels.empty() ? 0 : m.rx_levels.back().second;
}

// Whether bytes of a silent message, granted at `level`, should be asked for
// again now. Module rule: the message has been silent for resend_after. Ours,
// for microsecond timers: strict priority can hold such bytes in a switch
// queue for as long as the receiver keeps getting DATA at higher levels (SRPT
// starvation, routine in an incast), so that silence is not taken for loss,
// up to resend_max_wait. Bytes of a gap (a later byte of the message has
// arrived, so they were sent before it) are certainly lost, though, when a
// packet at the same or a lower level has arrived that was sent after them:
// a later byte of the message itself, or any packet sent more than
// resend_after after that later byte (FIFO within a level; the margin covers
// differences between paths).
bool HomaTransport::overdue(const Host& host, const IncomingMessage& m, int level,
                            std::uint64_t end, bool gap) const {
  const TimePs now = env_.sim.now();
  if (now - m.rx_last_progress < config_.resend_after_ps) return false;
  if (gap) {
    for (int l = 0; l <= level; ++l) {
      const auto i = static_cast<std::size_t>(l);
      if (m.max_end_at_level[i] > end) return true;
      if (host.max_sent_data_ps[i] > m.recv_end_sent_ps + config_.resend_after_ps) return true;
    }
  }
  if (now - m.rx_last_progress >= config_.resend_max_wait_ps) return true;
  TimePs higher = 0;
  for (int l = level + 1; l < kNumPriorities; ++l) {
    higher = std::max(higher, host.last_data_ps[static_cast<std::size_t>(l)]);
  }
  return now - higher >= config_.resend_after_ps;
}

void HomaTransport::on_resend_timer(IncomingMessage& m) {
  if (!expecting(m)) return;
  const TimePs quiet_until = m.rx_last_progress + config_.resend_after_ps;
  if (env_.sim.now() < quiet_until) {
    m.resend_timer->arm_at(quiet_until);
    return;
  }
  if (request_retransmission(*hosts_[static_cast<std::size_t>(m.spec.dst)], m) > 0) {
    ++stats_.timeouts;
    ++resend_rounds_;
  }
  m.resend_timer->arm_in(config_.resend_interval_ps);
}

// Module homa_request_retrans: one RESEND per gap below the highest byte
// received, and one for the granted bytes beyond it; here only for the ranges
// that are overdue. Returns the number of RESENDs sent.
int HomaTransport::request_retransmission(const Host& host, IncomingMessage& m) {
  const std::uint64_t mtu = env_.mtu_bytes;
  const std::uint64_t first_missing = m.received.cumulative_bytes();
  int sent = 0;
  const std::uint64_t end_index = (m.recv_end + mtu - 1) / mtu;
  std::uint64_t i = first_missing / mtu;
  while (i < end_index) {
    if (m.received.has(i)) {
      ++i;
      continue;
    }
    const std::uint64_t gap_begin = i;
    while (i < end_index && !m.received.has(i)) ++i;
    const std::uint64_t begin = gap_begin * mtu;
    const std::uint64_t end = std::min(i * mtu, m.length);
    // A gap granted at several levels is judged by its lowest.
    int level = kTopPriority;
    for (std::uint64_t b = begin; b < end; b += mtu) level = std::min(level, granted_level(m, b));
    if (overdue(host, m, level, end, true)) {
      send_resend(m, begin, end - begin);
      ++sent;
    }
  }
  if (m.recv_end < m.rx_granted) {
    int level = kTopPriority;
    for (const auto& [range_end, range_level] : m.rx_levels) {
      if (range_end > m.recv_end) level = std::min<int>(level, range_level);
    }
    if (overdue(host, m, level, m.rx_granted, false)) {
      send_resend(m, m.recv_end, m.rx_granted - m.recv_end);
      ++sent;
    }
  }
  return sent;
}

void HomaTransport::on_data(Host& host, IncomingMessage& m, const Packet& p) {
  if (!m.rx_known) {
    m.rx_known = true;
    m.birth_ps = env_.sim.now();
    const homa_header::DataFields data = homa_header::get_data(p);
    m.length = data.message_length;
    m.received = SegmentTracker(m.length, env_.mtu_bytes);
    m.rx_granted = std::min(m.length, data.unscheduled_bytes);
    m.rx_levels.emplace_back(m.rx_granted, unsched_priority(m.length));
  }
  const std::size_t level = p.priority & (kNumPriorities - 1);
  host.last_data_ps[level] = env_.sim.now();
  host.max_sent_data_ps[level] = std::max(host.max_sent_data_ps[level], p.sent_at_ps);
  m.max_end_at_level[level] = std::max(m.max_end_at_level[level], p.seq + p.payload_bytes);
  m.rx_last_progress = env_.sim.now();
  if (m.complete) {
    ++stats_.duplicate_packets;
    return;
  }
  if (m.received.add(p.seq)) {
    if (p.seq + p.payload_bytes > m.recv_end) {
      m.recv_end = p.seq + p.payload_bytes;
      m.recv_end_sent_ps = p.sent_at_ps;
    }
    const std::uint64_t first_missing = m.received.cumulative_bytes();
    while (m.rx_levels.size() > 1 && m.rx_levels.front().first <= first_missing) {
      m.rx_levels.pop_front();
    }
  } else {
    ++stats_.duplicate_packets;
  }
  if (m.received.complete()) {
    m.complete = true;
    side_finished_ = true;
    env_.observer.on_flow_complete(m.spec, env_.sim.now());
    m.resend_timer->cancel();
    update_incoming(host, m);
    update_grantable(host, m);
    send_control(m, new_control(m, homa_header::kAck));
  } else {
    update_incoming(host, m);
    update_grantable(host, m);
    arm_resend(m);
  }
  schedule_grants(host);  // SRPT is recomputed on every DATA arrival
}

void HomaTransport::update_incoming(Host& host, IncomingMessage& m) {
  const std::uint64_t received = m.received.delivered_bytes();
  const std::uint64_t incoming =
      m.complete || m.rx_granted <= received ? 0 : m.rx_granted - received;
  host.total_incoming = host.total_incoming + incoming - m.rx_incoming;
  m.rx_incoming = incoming;
}

void HomaTransport::update_grantable(Host& host, IncomingMessage& m) {
  const bool should = m.rx_known && !m.complete && m.rx_granted < m.length;
  const GrantKey key{m.length - m.received.delivered_bytes(), m.birth_ps, m.spec.id};
  if (m.in_grantable && (!should || key != m.grant_key)) {
    host.grantable.erase(m.grant_key);
    m.in_grantable = false;
  }
  if (should && !m.in_grantable) {
    host.grantable.insert(key);
    m.grant_key = key;
    m.in_grantable = true;
  }
}

// Module homa_grant_recalc / homa_grant_pick_rpcs / homa_grant_send, with the
// paper's window: the top `overcommitment` grantable messages, at most one per
// sender, each granted up to `window` bytes beyond what has arrived, within
// the `max_incoming` budget. Repeats when a message became fully granted (a
// slot opened). Then, every grant_nonfifo SRPT bytes, one FIFO grant.
void HomaTransport::schedule_grants(Host& host) {
  std::size_t num_active = 0;
  for (int pass = 0; pass < 64; ++pass) {
    active_.clear();
    active_senders_.clear();
    for (const GrantKey& key : host.grantable) {
      IncomingMessage& m = *incoming_.find(std::get<2>(key));
      if (std::find(active_senders_.begin(), active_senders_.end(), m.spec.src) !=
          active_senders_.end()) {
        continue;  // never two messages of one sender (module max_rpcs_per_peer = 1)
      }
      active_senders_.push_back(m.spec.src);
      active_.push_back(&m);
      if (active_.size() == config_.overcommitment) break;
    }
    num_active = active_.size();
    const int n = static_cast<int>(num_active);
    const int extra = std::max(0, max_sched_prio_ + 1 - n);
    const std::uint64_t window =
        config_.dynamic_window ? max_incoming_ / (num_active + 1) : grant_window_;
    bool slot_opened = false;
    for (int rank = 0; rank < n; ++rank) {
      IncomingMessage& m = *active_[static_cast<std::size_t>(rank)];
      m.rx_priority = static_cast<std::uint8_t>(std::max(0, max_sched_prio_ - rank - extra));
      const std::uint64_t received = m.received.delivered_bytes();
      const std::uint64_t target = std::min(m.length, round_to_packets(received + window));
      if (target <= m.rx_granted) continue;
      if (host.total_incoming >= max_incoming_) continue;
      const std::uint64_t available = max_incoming_ - host.total_incoming;
      const std::uint64_t increment = std::min(target - m.rx_granted, available);
      const std::uint64_t granted = std::min(m.length, round_to_packets(m.rx_granted + increment));
      host.nonfifo_left -= static_cast<std::int64_t>(granted - m.rx_granted);
      m.rx_granted = granted;
      update_incoming(host, m);
      send_grant(m, m.rx_priority);
      arm_resend(m);
      if (m.rx_granted >= m.length) {
        update_grantable(host, m);
        slot_opened = true;
      }
    }
    if (!slot_opened) break;
  }
  if (grant_nonfifo_ > 0 && host.nonfifo_left <= 0) {
    host.nonfifo_left += grant_nonfifo_;
    // Only when some grantable message is left out of the active set: then
    // SRPT could starve it (module: more grantable peers than max_overcommit).
    if (host.grantable.size() > num_active) fifo_grant(host);
  }
}

// Module homa_grant_fifo: a "pity" grant of fifo_grant_increment bytes, at the
// highest scheduled level, to the oldest grantable message that has no
// outstanding pity grant (at most unsched_bytes granted but not received).
bool HomaTransport::fifo_grant(Host& host) {
  IncomingMessage* oldest = nullptr;
  for (const GrantKey& key : host.grantable) {
    IncomingMessage& m = *incoming_.find(std::get<2>(key));
    if (m.rx_granted - std::min(m.rx_granted, m.received.delivered_bytes()) > unsched_bytes_) {
      continue;
    }
    if (oldest == nullptr ||
        std::tie(m.birth_ps, m.spec.id) < std::tie(oldest->birth_ps, oldest->spec.id)) {
      oldest = &m;
    }
  }
  if (oldest == nullptr) return false;
  IncomingMessage& m = *oldest;
  m.rx_granted = std::min(m.length, round_to_packets(m.rx_granted + config_.fifo_grant_increment));
  update_incoming(host, m);
  update_grantable(host, m);
  ++fifo_grants_;
  send_grant(m, static_cast<std::uint8_t>(max_sched_prio_));
  arm_resend(m);
  return true;
}

// ----------------------------------------------------------------- both --

Packet& HomaTransport::new_control(const OutgoingMessage& m, homa_header::Type type) {
  return new_control_packet(env_, m.spec, m.data_route, false, type, kControlPriority);
}

Packet& HomaTransport::new_control(const IncomingMessage& m, homa_header::Type type) {
  return new_control_packet(env_, m.spec, m.reverse_route, true, type, kControlPriority);
}

void HomaTransport::send_control(MessageSide& from, Packet& p) {
  count_control(stats_, p, p.message_type == homa_header::kAck, from.control_packets);
  forward(p);
}

void HomaTransport::send_grant(IncomingMessage& m, std::uint8_t priority) {
  if (!m.rx_levels.empty() && m.rx_levels.back().second == priority) {
    m.rx_levels.back().first = m.rx_granted;
  } else {
    m.rx_levels.emplace_back(m.rx_granted, priority);
  }
  m.rx_last_progress = env_.sim.now();  // module: a grant resets silent_ticks
  Packet& p = new_control(m, homa_header::kGrant);
  homa_header::put_grant(p, {m.rx_granted, priority});
  send_control(m, p);
}

// A RESEND names a byte range and also repeats the current grant (offset and
// scheduled level), so a lost GRANT is repaired by the next RESEND.
void HomaTransport::send_resend(IncomingMessage& m, std::uint64_t offset, std::uint64_t length) {
  Packet& p = new_control(m, homa_header::kResend);
  homa_header::put_resend(p, {offset, length, {m.rx_granted, m.rx_priority}});
  if (length > 0) ++resends_;
  send_control(m, p);
}

void HomaTransport::on_packet(Host& host, Packet& p) {
  switch (p.message_type) {
    case homa_header::kData:
    case homa_header::kBusy:
    case homa_header::kNeedAck:
      if (IncomingMessage* m = incoming_.find(p.flow_id)) on_receiver_packet(host, *m, p);
      break;
    default:
      if (OutgoingMessage* m = outgoing_.find(p.flow_id)) on_sender_packet(*m, p);
      break;
  }
  const std::uint32_t id = p.flow_id;
  env_.pool.release(&p);
  if (side_finished_) {
    side_finished_ = false;
    retire_if_done(id);
  }
}

// The ACK (at the sender) and the last DATA (at the receiver) both come
// with a packet, so the end of on_packet sees every message that is done;
// it looks only when one side has just finished (side_finished_).
void HomaTransport::retire_if_done(std::uint32_t id) {
  retire_when_done(
      id, outgoing_, incoming_, retiring_,
      [](const OutgoingMessage& out, const IncomingMessage& in) {
        return out.acked && in.complete;
      },
      [this](std::uint32_t i) { return unreachable(i); }, *this, env_.observer);
}

// Nothing can reach the message's entries: no packet on its routes (a late
// NEED_ACK would still be answered), no timer event queued, in no host set.
bool HomaTransport::unreachable(std::uint32_t id) const {
  const OutgoingMessage& out = *outgoing_.find(id);
  const IncomingMessage& in = *incoming_.find(id);
  return out.data_route.packets_alive == 0 && in.reverse_route.packets_alive == 0 &&
         !out.in_ready && out.retx_queued.empty() && out.probe_timer->idle() && !in.in_grantable &&
         in.resend_timer->idle();
}

void HomaTransport::on_sender_packet(OutgoingMessage& m, const Packet& p) {
  switch (p.message_type) {
    case homa_header::kGrant: {
      note_sender_activity(m);
      const homa_header::GrantFields grant = homa_header::get_grant(p);
      apply_grant(m, grant.offset, grant.priority);
      return;
    }
    case homa_header::kResend: {
      note_sender_activity(m);
      if (m.acked) return;
      const homa_header::ResendFields resend = homa_header::get_resend(p);
      apply_grant(m, resend.grant.offset, resend.grant.priority);
      if (resend.length == 0) return;  // only "still here, keep waiting"
      // Module homa_resend_pkt: retransmit what of the range was sent; if
      // none of it was, the sender is choosing to send other messages: BUSY.
      if (resend.offset < m.next_offset) {
        queue_retransmit(m, resend.offset, std::min(resend.offset + resend.length, m.next_offset));
      } else {
        send_control(m, new_control(m, homa_header::kBusy));
      }
      return;
    }
    case homa_header::kAck:  // the receiver has the whole message
      if (!m.acked) {
        m.acked = true;
        side_finished_ = true;
        update_ready(m);
        m.probe_timer->cancel();
      }
      return;
    case homa_header::kUnknown:  // everything sent was lost
      note_sender_activity(m);
      queue_retransmit(m, 0, m.next_offset);
      return;
    default:
      return;
  }
}

void HomaTransport::on_receiver_packet(Host& host, IncomingMessage& m, const Packet& p) {
  switch (p.message_type) {
    case homa_header::kData:
      on_data(host, m, p);
      return;
    case homa_header::kBusy:  // the sender is alive
      m.rx_last_progress = env_.sim.now();
      arm_resend(m);
      return;
    case homa_header::kNeedAck:
      if (!m.rx_known) {
        ++unknowns_;
        send_control(m, new_control(m, homa_header::kUnknown));
      } else if (m.complete) {
        send_control(m, new_control(m, homa_header::kAck));
      } else if (!expecting(m) || request_retransmission(host, m) == 0) {
        send_resend(m, m.recv_end, 0);  // known, nothing overdue: keep waiting
      }
      return;
    default:
      return;
  }
}

}  // namespace safs
