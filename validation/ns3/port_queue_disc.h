// The egress port of safs-sim (src/net/priority_queue.cc) as an ns-3 queue
// disc, so both simulators buffer, mark and drop by one rule:
//   - backlog = every packet waiting at the port: this queue disc plus the
//     device's transmit queue (the packet on the wire is not counted);
//   - drop-tail when backlog + the arriving packet's wire bytes > the buffer;
//   - CE mark (for ECN-capable packets) when backlog > K on arrival, before
//     the arriving packet is added (the instantaneous queue, no averaging).
// It also pads every packet so that it occupies exactly payload + the
// scenario's header bytes on the wire (safs-sim's 78: IPv4, TCP, Ethernet
// header and FCS, preamble and inter-frame gap). The padding is a trailer
// beyond the IPv4 payload length, which the next IPv4 layer strips, so TCP
// never sees it; every hop's queue disc adds it again.
#pragma once

#include <cstdint>

#include "ns3/queue-disc.h"
#include "ns3/queue.h"

namespace safs_validation {

class PortQueueDisc : public ns3::QueueDisc {
 public:
  static ns3::TypeId GetTypeId();
  PortQueueDisc();

  // The device queue whose packets count toward the backlog (attach after install).
  void SetDeviceQueue(ns3::Ptr<ns3::Queue<ns3::Packet>> queue) { device_queue_ = queue; }
  ns3::Ptr<ns3::Queue<ns3::Packet>> DeviceQueue() const { return device_queue_; }

  // Bytes waiting at the port as safs-sim counts them (wire bytes).
  std::uint64_t BacklogBytes() const;
  std::uint32_t LinkHeaderBytes() const { return link_header_bytes_; }
  std::uint64_t Marks() const { return marks_; }
  std::uint64_t Drops() const { return drops_; }

 private:
  bool DoEnqueue(ns3::Ptr<ns3::QueueDiscItem> item) override;
  ns3::Ptr<ns3::QueueDiscItem> DoDequeue() override;
  bool CheckConfig() override;
  void InitializeParams() override {}

  // Wire bytes of an item in this queue disc (IPv4 item + link header).
  std::uint32_t WireBytes(ns3::Ptr<const ns3::QueueDiscItem> item) const;
  void PadToWireSize(ns3::Ptr<ns3::QueueDiscItem> item) const;

  std::uint64_t buffer_bytes_ = UINT64_MAX;          // UINT64_MAX: unlimited (a host NIC)
  std::uint64_t mark_threshold_bytes_ = UINT64_MAX;  // UINT64_MAX: never mark
  std::uint32_t header_bytes_ = 78;
  std::uint32_t link_header_bytes_ = 2;  // PPP header the device adds
  ns3::Ptr<ns3::Queue<ns3::Packet>> device_queue_;
  std::uint64_t marks_ = 0;
  std::uint64_t drops_ = 0;
};

}  // namespace safs_validation
