#include "port_queue_disc.h"

#include <cstdint>

#include "ns3/drop-tail-queue.h"
#include "ns3/ipv4-header.h"
#include "ns3/tcp-header.h"
#include "ns3/uinteger.h"

namespace safs_validation {

using namespace ns3;

NS_OBJECT_ENSURE_REGISTERED(PortQueueDisc);

TypeId PortQueueDisc::GetTypeId() {
  static TypeId tid =
      TypeId("safs_validation::PortQueueDisc")
          .SetParent<QueueDisc>()
          .AddConstructor<PortQueueDisc>()
          .AddAttribute("BufferBytes", "Port buffer in wire bytes (default: unlimited, a host NIC)",
                        UintegerValue(UINT64_MAX),
                        MakeUintegerAccessor(&PortQueueDisc::buffer_bytes_),
                        MakeUintegerChecker<std::uint64_t>())
          .AddAttribute("MarkThresholdBytes", "ECN threshold K in wire bytes (default: never mark)",
                        UintegerValue(UINT64_MAX),
                        MakeUintegerAccessor(&PortQueueDisc::mark_threshold_bytes_),
                        MakeUintegerChecker<std::uint64_t>())
          .AddAttribute("HeaderBytes", "Wire bytes per packet beyond the TCP payload",
                        UintegerValue(78), MakeUintegerAccessor(&PortQueueDisc::header_bytes_),
                        MakeUintegerChecker<std::uint32_t>())
          .AddAttribute("LinkHeaderBytes", "Bytes the device adds (PPP: 2)", UintegerValue(2),
                        MakeUintegerAccessor(&PortQueueDisc::link_header_bytes_),
                        MakeUintegerChecker<std::uint32_t>());
  return tid;
}

PortQueueDisc::PortQueueDisc() : QueueDisc(QueueDiscSizePolicy::NO_LIMITS) {}

std::uint32_t PortQueueDisc::WireBytes(Ptr<const QueueDiscItem> item) const {
  return item->GetSize() + link_header_bytes_;
}

void PortQueueDisc::PadToWireSize(Ptr<QueueDiscItem> item) const {
  // The item is the TCP segment plus a pending IPv4 header: wire bytes are
  // IPv4 + TCP header (with options) + payload + link header.
  TcpHeader tcp;
  const Ptr<Packet> packet = item->GetPacket();
  packet->PeekHeader(tcp);
  const std::uint32_t payload = packet->GetSize() - tcp.GetSerializedSize();
  const std::uint32_t wire = WireBytes(item);
  const std::uint32_t target = payload + header_bytes_;
  if (wire < target) packet->AddPaddingAtEnd(target - wire);
}

std::uint64_t PortQueueDisc::BacklogBytes() const {
  std::uint64_t bytes = GetNBytes() + std::uint64_t{link_header_bytes_} * GetNPackets();
  if (device_queue_) bytes += device_queue_->GetNBytes();
  return bytes;
}

bool PortQueueDisc::DoEnqueue(Ptr<QueueDiscItem> item) {
  PadToWireSize(item);
  const std::uint64_t backlog = BacklogBytes();
  if (backlog + WireBytes(item) > buffer_bytes_) {
    ++drops_;
    DropBeforeEnqueue(item, "buffer full");
    return false;
  }
  if (backlog > mark_threshold_bytes_ && Mark(item, "above K")) {
    ++marks_;
  }
  return GetInternalQueue(0)->Enqueue(item);
}

Ptr<QueueDiscItem> PortQueueDisc::DoDequeue() { return GetInternalQueue(0)->Dequeue(); }

bool PortQueueDisc::CheckConfig() {
  if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0) return false;
  if (GetNInternalQueues() == 0) {
    AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
        "MaxSize", QueueSizeValue(QueueSize("100000000p"))));
  }
  return GetNInternalQueues() == 1;
}

}  // namespace safs_validation
