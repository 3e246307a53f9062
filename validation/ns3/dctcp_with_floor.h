// Stock ns-3 TcpDctcp with Linux's floor under the ECN cut: cwnd never
// below two segments (Linux dctcp_ssthresh: max(cwnd - cwnd*alpha/2, 2)).
// ns-3 3.37 has no floor; safs-sim keeps Linux's, and the suite takes Linux
// as the reference (case key dctcp_floor 0 gives stock ns-3).
#pragma once

#include <algorithm>

#include "ns3/tcp-dctcp.h"

namespace safs_validation {

class DctcpWithFloor : public ns3::TcpDctcp {
 public:
  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid = ns3::TypeId("safs_validation::DctcpWithFloor")
                                 .SetParent<ns3::TcpDctcp>()
                                 .AddConstructor<DctcpWithFloor>();
    return tid;
  }
  std::uint32_t GetSsThresh(ns3::Ptr<const ns3::TcpSocketState> tcb,
                            std::uint32_t bytes_in_flight) override {
    return std::max(ns3::TcpDctcp::GetSsThresh(tcb, bytes_in_flight), 2 * tcb->m_segmentSize);
  }
  ns3::Ptr<ns3::TcpCongestionOps> Fork() override { return ns3::CopyObject<DctcpWithFloor>(this); }
};

}  // namespace safs_validation
