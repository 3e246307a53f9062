// Window-based reliable transport in the style of Linux TCP, with the
// congestion response plugged in (Reno, DCTCP; D2TCP later).
//
// Sender: byte sequence numbers over fixed MTU-sized segments, slow start and
// congestion avoidance with byte counting (RFC 3465), NewReno fast
// retransmit/recovery on three duplicate ACKs (RFC 6582), and a retransmission
// timeout per RFC 6298 with exponential backoff (go-back-N after a timeout).
// Receiver: ACKs every segment (no delayed ACKs, so DCTCP's CE echo needs no
// state machine) with the cumulative point, the CE bit as ECE, and the
// segment's send time for RTT samples (like the TCP timestamp option, so
// retransmissions give valid samples too).
// Each host's NIC serves its sending flows round-robin, one segment at a time.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "engine/ring_queue.h"
#include "engine/timer.h"
#include "transport/common/segment_tracker.h"
#include "transport/tcp/congestion_control.h"
#include "transport/transport.h"

namespace safs {

struct TcpConfig {
  std::uint32_t initial_cwnd_packets = 10;  // RFC 6928
  TimePs rto_min_ps = kPsPerMs;             // datacenter-tuned minimum RTO
  TimePs rto_max_ps = 64 * kPsPerMs;
  std::uint32_t dupack_threshold = 3;       // RFC 5681
  std::uint32_t initial_alpha = kAlphaOne;  // DCTCP alpha at flow start
  std::uint8_t data_priority = 0;
  std::uint8_t ack_priority = 0;  // ACKs share the data queue, as in a plain TCP network
};

class TcpTransport final : public Transport {
 public:
  TcpTransport(TransportEnv& env, const TcpConfig& config,
               std::unique_ptr<CongestionControl> control);
  ~TcpTransport() override;

  void start_flow(const FlowSpec& flow) override;
  TransportStats stats() const override { return stats_; }
  std::uint64_t delivered_bytes(std::uint32_t flow_id) const override;

 private:
  struct Flow;
  class Host;

  Flow* flow_for(std::uint32_t id) { return id < flows_by_id_.size() ? flows_by_id_[id] : nullptr; }
  void on_packet(Packet& packet);
  void on_data(Flow& flow, Packet& data);
  void on_ack(Flow& flow, const Packet& ack);
  void on_new_ack(Flow& flow, std::uint64_t ack);
  void on_duplicate_ack(Flow& flow);
  void on_timeout(Flow& flow);
  void grow_window(Flow& flow, std::uint64_t acked_bytes);
  bool can_send(const Flow& flow) const;
  Packet* next_segment(Host& host);
  void make_ready(Flow& flow);
  std::uint32_t segment_bytes(const Flow& flow, std::uint64_t seq) const;

  TransportEnv env_;
  TcpConfig config_;
  std::unique_ptr<CongestionControl> control_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::deque<Flow> flows_;  // stable addresses: packets point at their routes
  std::vector<Flow*> flows_by_id_;
  TransportStats stats_;
};

}  // namespace safs
