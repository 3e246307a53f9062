// The interface every transport implements, and what it is given.
//
// A transport owns the per-host state of its protocol. It receives packets
// from the network as each host's PacketSink and supplies each host NIC as its
// PacketSource, so it decides at every transmission opportunity which flow
// sends (window, pacing, priority, SRPT). Control packets (ACKs, grants) are
// pushed straight into the NIC queue with forward().
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/flow.h"
#include "base/time.h"

namespace safs {

// Only referenced here; a transport includes what it uses.
class Network;
class PacketPool;
class PacketSink;
class PacketSource;
class Simulator;

// The flow id of a control packet addressed to a host's transport, not to a
// flow (SAFS's announcements of transfers not started yet, and their grants).
// Flow ids are dense from 0 and never reach it.
inline constexpr std::uint32_t kHostMessageFlowId = UINT32_MAX;

struct TransportStats {
  std::uint64_t data_packets = 0;  // including retransmissions
  std::uint64_t retransmissions = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t control_packets = 0;     // ACKs, grants, resends, metadata
  std::uint64_t control_bytes = 0;       // wire bytes of control packets
  std::uint64_t scheduling_packets = 0;  // of which not ACKs: grants, metadata, reports
  std::uint64_t duplicate_packets = 0;   // data that arrived twice and was discarded

  TransportStats& operator+=(const TransportStats& o) {
    data_packets += o.data_packets;
    retransmissions += o.retransmissions;
    timeouts += o.timeouts;
    control_packets += o.control_packets;
    control_bytes += o.control_bytes;
    scheduling_packets += o.scheduling_packets;
    duplicate_packets += o.duplicate_packets;
    return *this;
  }
};

// A count a transport keeps of one of its own mechanisms, reported after the
// common TransportStats (summary.json's transport_stats). Only a mechanism
// that is switched on reports, so runs without it keep their outputs.
struct MechanismCount {
  std::string name;  // a summary.json key: lower case, with underscores
  std::uint64_t value = 0;
};

// Per-flow packet counts, for control-overhead metrics.
struct FlowCounters {
  std::uint64_t data_packets = 0;     // sent, including retransmissions
  std::uint64_t control_packets = 0;  // scheduling control: grants, metadata, reports (not ACKs)
};

// A flow's counts when its transport freed its state.
struct FlowFinal {
  std::uint64_t delivered_bytes = 0;
  FlowCounters counters;
};

class FlowObserver {
 public:
  virtual ~FlowObserver() = default;
  // All of the flow's bytes have reached the receiving application.
  virtual void on_flow_complete(const FlowSpec& flow, TimePs at) = 0;
  // The transport freed the flow's state (both ends done, nothing of it left
  // in the network): `final` is what delivered_bytes() and flow_counters()
  // would have said for the rest of the run; they say 0 from now on.
  virtual void on_flow_released(std::uint32_t /*flow_id*/, const FlowFinal& /*final*/) {}
};

// Told of every rate grant a receiver sends, for traces. Never changes what
// the transport does.
using GrantObserver =
    std::function<void(TimePs at, std::uint32_t flow_id, double rate_bps, int receiver_host)>;

// Takes a transport's endpoints of one host: where packets for the host are
// delivered and what its NIC pulls from. A transport that shares the hosts
// with another (TenantMux) collects them here instead of the network.
class HostAttacher {
 public:
  virtual ~HostAttacher() = default;
  virtual void attach_host(int host, PacketSink* receiver, PacketSource* source) = 0;
};

struct TransportEnv {
  Simulator& sim;
  Network& net;
  PacketPool& pool;
  FlowObserver& observer;
  std::uint32_t mtu_bytes;     // payload bytes per full packet
  std::uint32_t header_bytes;  // wire overhead per packet (headers, preamble, gap)
  std::uint64_t seed;
  // Transports copy their environment, so this points to the owner's observer
  // (empty unless tracing). SAFS calls it per grant sent.
  const GrantObserver* on_grant_sent = nullptr;
  // Where attach_host_endpoints puts the endpoints; null: Network::attach_host.
  HostAttacher* attach = nullptr;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Called at flow.start_ps.
  virtual void start_flow(const FlowSpec& flow) = 0;
  virtual TransportStats stats() const = 0;
  // Bytes of the flow delivered to the receiving application so far, each
  // byte counted once however often it arrived.
  virtual std::uint64_t delivered_bytes(std::uint32_t flow_id) const = 0;
  virtual FlowCounters flow_counters(std::uint32_t flow_id) const = 0;
  // Flows whose state the transport still holds: started and not yet freed
  // (FlowObserver::on_flow_released), for tests of what a run keeps.
  virtual std::size_t live_flows() const = 0;
  // The runtime moved the flow's deadline (its no-bubble timestamp), e.g.
  // because the consumer fell behind. Transports that ignore deadlines may
  // ignore this too.
  virtual void update_deadline(std::uint32_t flow_id, TimePs deadline_ps) = 0;
  // A workload knows a transfer before it starts: `planned` as it will be
  // started, its projected start in start_ps (its id not assigned yet; the
  // sender and the dependency name it). Transports that plan nothing ignore it.
  virtual void announce_flow(const FlowSpec& /*planned*/) {}
  // Counts of the transport's own mechanisms that are switched on (none by
  // default), in a fixed order.
  virtual std::vector<MechanismCount> mechanism_stats() const { return {}; }
  // The run is over: give back memory kept only for later flows to reuse
  // (the blocks of freed per-flow state), so that what is written after the
  // run can use it. The live flows' state stays.
  virtual void free_spare_memory() {}
};

}  // namespace safs
