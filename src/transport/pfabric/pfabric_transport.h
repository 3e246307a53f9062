// pFabric end hosts (Alizadeh et al., "pFabric: Minimal Near-Optimal
// Datacenter Transport", SIGCOMM 2013, §4.2), paired with the PFabricQueue
// switch discipline. See docs/transports.md ("pfabric").
//
// Every packet carries its flow's remaining size (bytes not yet acknowledged,
// cumulatively or selectively) as Packet::rank, or with rank = "deadline" its
// deadline (pfabric-edf); ACKs carry rank 0 and leave the host NIC at the top
// priority. A flow starts at line rate with a window
// of one bandwidth-delay product of its path, grows it like TCP (slow start,
// then one MTU per window) up to a cap, and recovers from loss by timeouts
// only: no fast retransmit, a small fixed RTO, and after a run of consecutive
// timeouts a probe mode that sends one minimum-size probe per RTT until an ACK
// arrives. The receiver acknowledges every packet with the cumulative point,
// the segment it answers and a selective-ACK bitmap of the segments above the
// cumulative point, so a retransmission never repeats a segment the sender
// knows has arrived. Each host NIC serves its flows by the same rank: shortest
// remaining (or earliest deadline) first.
// The sender's and the receiver's state of a flow are separate entries, each
// in its own table; the messages and their fields are in pfabric_header.h.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "engine/timer.h"
#include "net/network.h"
#include "transport/common/flow_table.h"
#include "transport/common/retiring_flows.h"
#include "transport/common/segment_tracker.h"
#include "transport/pfabric/index_heap.h"
#include "transport/pfabric/pfabric_options.h"
#include "transport/transport.h"

namespace safs {

// Counters beyond TransportStats, for tests and reports.
struct PFabricStats {
  std::uint64_t probes = 0;              // probe packets sent (also in control_packets)
  std::uint64_t probe_mode_entries = 0;  // times a flow entered probe mode
};

class PFabricTransport final : public Transport {
 public:
  PFabricTransport(TransportEnv& env, const PFabricConfig& config);
  ~PFabricTransport() override;

  void start_flow(const FlowSpec& flow) override;
  TransportStats stats() const override { return stats_; }
  std::uint64_t delivered_bytes(std::uint32_t flow_id) const override;
  FlowCounters flow_counters(std::uint32_t flow_id) const override;
  std::size_t live_flows() const override { return senders_.live(); }
  void free_spare_memory() override {
    senders_.free_spares();
    receivers_.free_spares();
  }
  void update_deadline(std::uint32_t flow_id, TimePs deadline_ps) override;

  const PFabricStats& pfabric_stats() const { return pfabric_stats_; }

  // What a started flow derived from its path (for tests and reports).
  struct PathInfo {
    TimePs base_rtt_ps = 0;  // a full packet there and its ACK back, unloaded
    std::uint64_t bdp_bytes = 0;
    std::uint32_t initial_window_packets = 0;
    std::uint32_t max_window_packets = 0;
    TimePs rto_ps = 0;
  };
  PathInfo path_info(std::uint32_t flow_id) const;

 private:
  struct SenderFlow;    // at the flow's source host
  struct ReceiverFlow;  // at its destination
  class Host;
  struct ReadyBefore {
    const PFabricTransport* t;
    bool operator()(std::uint32_t a, std::uint32_t b) const;
  };
  struct ReadyPosition {
    PFabricTransport* t;
    std::uint32_t& operator()(std::uint32_t id) const;
  };
  using ReadyHeap = IndexHeap<ReadyBefore, ReadyPosition>;

  void on_packet(Packet& packet);
  // After a packet of flow `id` that ended one of its sides (or the start of
  // an empty flow): once both ends are done the flow waits to be freed.
  void retire_if_done(std::uint32_t id);
  bool unreachable(std::uint32_t id) const;
  // Receiver.
  void on_data(ReceiverFlow& flow, const Packet& data);
  void send_ack(ReceiverFlow& flow, std::uint64_t seq, bool probe, TimePs echo_ps);
  // Sender.
  void on_ack(SenderFlow& flow, const Packet& ack);
  std::uint64_t mark_acked(SenderFlow& flow, std::uint64_t seq);
  void grow_window(SenderFlow& flow, std::uint64_t acked_bytes);
  void on_timeout(SenderFlow& flow);
  void on_probe_timer(SenderFlow& flow);
  void finish_sender(SenderFlow& flow);
  std::uint64_t rank(const SenderFlow& flow) const;
  bool sendable(SenderFlow& flow);
  void refresh(SenderFlow& flow);  // the flow's place in its host's ready heap
  Packet* next_packet(Host& host);
  Packet* build_segment(SenderFlow& flow);
  Packet* build_probe(SenderFlow& flow);
  std::uint32_t segment_bytes(const SenderFlow& flow, std::uint64_t seq) const;

  TransportEnv env_;
  PFabricConfig config_;
  std::vector<std::unique_ptr<Host>> hosts_;
  FlowTable<SenderFlow> senders_;
  FlowTable<ReceiverFlow> receivers_;
  RetiringFlows retiring_;
  bool side_finished_ = false;  // the packet being handled ended one side of its flow
  TransportStats stats_;
  PFabricStats pfabric_stats_;
};

}  // namespace safs
