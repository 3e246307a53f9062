// The ns-3 reference side of the fidelity suite: runs one case (a case file
// written by validation/fidelity.py) with stock ns-3 TCP (TcpDctcp or
// TcpNewReno) over a network built to match safs-sim's, and prints the same
// metrics safs-sim reports: every flow's start and finish, ECN marks and
// drops over the switch ports, retransmission timeouts, and the time-average
// queue of one port.
//
// Connections are opened during a warm-up before time zero of the case (TCP
// handshakes cost an RTT that safs-sim, which has none, does not model); the
// application writes each flow's bytes at warm-up + start_us, and FCTs are
// measured from then.
//
// Usage: safs-fidelity-ns3 CASE_FILE [CWND_TRACE_FILE]

#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <memory>
#include <stdexcept>

#include "case_file.h"
#include "dctcp_with_floor.h"
#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/rtt-estimator.h"
#include "topology.h"

using namespace ns3;
using namespace safs_validation;

namespace {

// Long enough for every handshake of a 128-to-1 incast to finish.
const Time kWarmup = MilliSeconds(1);

struct FlowState {
  FlowSpec spec;
  Ptr<Socket> sender;
  std::uint64_t received_bytes = 0;
  Time finish = Time::Max();
};

struct Results {
  std::vector<FlowState> flows;
  std::uint64_t timeouts = 0;
  std::size_t unfinished = 0;
};

Results* g_results = nullptr;

// Time integral of one port's backlog in wire bytes, between the first
// flow's start and the last flow's finish. The backlog is the queue disc's
// bytes, its link headers (per packet) and the device queue's bytes; each is
// followed through its trace source, whose callbacks see the new value
// before the queue stores it.
class QueueIntegral {
 public:
  enum Part { kDiscBytes, kDiscPackets, kDeviceBytes };

  QueueIntegral(Ptr<PortQueueDisc> port, std::uint32_t link_header_bytes)
      : link_header_bytes_(link_header_bytes) {
    port->TraceConnectWithoutContext("BytesInQueue", MakeBoundCallback(&Changed, this, kDiscBytes));
    port->TraceConnectWithoutContext("PacketsInQueue",
                                     MakeBoundCallback(&Changed, this, kDiscPackets));
    port->DeviceQueue()->TraceConnectWithoutContext(
        "BytesInQueue", MakeBoundCallback(&Changed, this, kDeviceBytes));
  }
  void MarkStart() {
    Advance();
    at_start_ = integral_byte_s_;
    start_ = Simulator::Now();
  }
  double MeanBytes() {
    Advance();
    const double span = (Simulator::Now() - start_).GetSeconds();
    return span > 0 ? (integral_byte_s_ - at_start_) / span : 0.0;
  }

 private:
  static void Changed(QueueIntegral* self, Part part, std::uint32_t /*old_value*/,
                      std::uint32_t new_value) {
    self->Advance();
    self->parts_[part] = new_value;
  }
  void Advance() {
    const Time now = Simulator::Now();
    const std::uint64_t bytes =
        parts_[kDiscBytes] + link_header_bytes_ * parts_[kDiscPackets] + parts_[kDeviceBytes];
    integral_byte_s_ += static_cast<double>(bytes) * (now - last_change_).GetSeconds();
    last_change_ = now;
  }

  std::uint32_t link_header_bytes_;
  std::uint64_t parts_[3] = {0, 0, 0};
  Time last_change_{0};
  double integral_byte_s_ = 0;
  double at_start_ = 0;
  Time start_{0};
};

std::unique_ptr<QueueIntegral> g_queue;
double g_mean_queue_bytes = 0;

void OnReceive(FlowState* flow, Ptr<const Packet> packet, const Address& /*from*/) {
  flow->received_bytes += packet->GetSize();
  if (flow->received_bytes < flow->spec.size_bytes || flow->finish != Time::Max()) return;
  flow->finish = Simulator::Now();
  if (--g_results->unfinished == 0) {
    if (g_queue) g_mean_queue_bytes = g_queue->MeanBytes();
    Simulator::Stop();
  }
}

// A retransmission timeout doubles the RTO (TcpSocketBase::ReTxTimeout);
// estimator updates never double it exactly at picosecond resolution.
void OnRto(Time old_value, Time new_value) {
  if (Simulator::Now() >= kWarmup && new_value == old_value + old_value) ++g_results->timeouts;
}

std::ofstream g_cwnd_trace;
void OnCwnd(std::uint32_t /*old_value*/, std::uint32_t new_value) {
  g_cwnd_trace << (Simulator::Now() - kWarmup).GetMicroSeconds() << ' ' << new_value << '\n';
}

void StartFlow(FlowState* flow) {
  flow->sender->Send(Create<Packet>(static_cast<std::uint32_t>(flow->spec.size_bytes)));
}

void ConfigureTcp(const CaseSpec& spec) {
  std::uint64_t largest = 0;
  for (const FlowSpec& flow : spec.flows) largest = std::max(largest, flow.size_bytes);
  const auto buffer = static_cast<std::uint32_t>(std::min<std::uint64_t>(
      2 * largest + 1000000, std::numeric_limits<std::uint32_t>::max() / 2));

  Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                     TypeIdValue(spec.transport == "reno" ? TcpNewReno::GetTypeId()
                                 : spec.dctcp_floor != 0  ? DctcpWithFloor::GetTypeId()
                                                          : TcpDctcp::GetTypeId()));
  Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                     TypeIdValue(spec.recovery == "prr" ? TcpPrrRecovery::GetTypeId()
                                                        : TcpClassicRecovery::GetTypeId()));
  Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(spec.mtu_bytes));
  Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(spec.initial_cwnd_packets));
  Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(1));  // ACK every segment
  Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(buffer));
  Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(buffer));
  Config::SetDefault("ns3::TcpSocket::DataRetries", UintegerValue(1000000));
  Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(spec.sack != 0));
  // ns-3's timestamps count milliseconds: useless for microsecond RTTs.
  Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(false));
  Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(true));
  Config::SetDefault("ns3::TcpSocketBase::MinRto",
                     TimeValue(PicoSeconds(static_cast<std::int64_t>(spec.rto_min_us * 1e6))));
  Config::SetDefault("ns3::TcpSocketBase::ClockGranularity", TimeValue(PicoSeconds(1)));
  Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(spec.dupack_threshold));
  // No RTT sample before the first data ACK: RTO = MinRto, as safs-sim starts.
  Config::SetDefault("ns3::RttEstimator::InitialEstimation", TimeValue(PicoSeconds(0)));
  Config::SetDefault("ns3::TcpDctcp::DctcpShiftG",
                     DoubleValue(1.0 / static_cast<double>(1u << spec.shift_g)));
  Config::SetDefault("ns3::TcpDctcp::DctcpAlphaOnInit", DoubleValue(spec.initial_alpha));
}

int Run(const std::string& case_path, const std::string& cwnd_path) {
  const CaseSpec spec = read_case_file(case_path);
  ConfigureTcp(spec);
  Fabric fabric = build_fabric(spec);

  Results results;
  g_results = &results;
  results.flows.resize(spec.flows.size());
  results.unfinished = spec.flows.size();
  double first_start_us = std::numeric_limits<double>::max();
  for (std::size_t i = 0; i < spec.flows.size(); ++i) {
    FlowState& flow = results.flows[i];
    flow.spec = spec.flows[i];
    first_start_us = std::min(first_start_us, flow.spec.start_us);
    const auto port = static_cast<std::uint16_t>(10000 + i);
    PacketSinkHelper sink("ns3::TcpSocketFactory", InetSocketAddress(Ipv4Address::GetAny(), port));
    ApplicationContainer apps = sink.Install(fabric.hosts.Get(flow.spec.dst));
    apps.Start(Seconds(0));
    apps.Get(0)->TraceConnectWithoutContext("Rx", MakeBoundCallback(&OnReceive, &flow));

    flow.sender =
        Socket::CreateSocket(fabric.hosts.Get(flow.spec.src), TcpSocketFactory::GetTypeId());
    flow.sender->Bind();
    flow.sender->TraceConnectWithoutContext("RTO", MakeCallback(&OnRto));
    if (i == 0 && !cwnd_path.empty()) {
      g_cwnd_trace.open(cwnd_path);
      flow.sender->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&OnCwnd));
    }
    const InetSocketAddress remote(fabric.host_address[flow.spec.dst], port);
    Simulator::Schedule(NanoSeconds(static_cast<std::int64_t>(i)),
                        [&flow, remote] { flow.sender->Connect(remote); });
    Simulator::Schedule(kWarmup + PicoSeconds(static_cast<std::int64_t>(flow.spec.start_us * 1e6)),
                        &StartFlow, &flow);
  }

  if (!spec.queue_port.empty()) {
    const auto it = fabric.ports.find(spec.queue_port);
    if (it == fabric.ports.end()) throw std::runtime_error("no port named " + spec.queue_port);
    g_queue = std::make_unique<QueueIntegral>(it->second, it->second->LinkHeaderBytes());
    Simulator::Schedule(kWarmup + PicoSeconds(static_cast<std::int64_t>(first_start_us * 1e6)),
                        [] { g_queue->MarkStart(); });
  }

  Simulator::Stop(kWarmup + PicoSeconds(static_cast<std::int64_t>(spec.stop_ms * 1e9)));
  Simulator::Run();

  std::uint64_t marks = 0;
  std::uint64_t drops = 0;
  for (const auto& [name, port] : fabric.ports) {
    marks += port->Marks();
    drops += port->Drops();
  }
  std::printf("ecn_marks %llu\nqueue_drops %llu\ntimeouts %llu\nmean_queue_bytes %.3f\n",
              static_cast<unsigned long long>(marks), static_cast<unsigned long long>(drops),
              static_cast<unsigned long long>(results.timeouts), g_mean_queue_bytes);
  for (std::size_t i = 0; i < results.flows.size(); ++i) {
    const FlowState& flow = results.flows[i];
    const double finish_s =
        flow.finish == Time::Max() ? -1.0 : (flow.finish - kWarmup).GetSeconds();
    std::printf("flow %zu %.9f %.12f\n", i, flow.spec.start_us * 1e-6, finish_s);
  }
  Simulator::Destroy();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Time::SetResolution(Time::PS);
  if (argc < 2 || argc > 3) {
    std::cerr << "usage: " << argv[0] << " CASE_FILE [CWND_TRACE_FILE]\n";
    return 2;
  }
  try {
    return Run(argv[1], argc == 3 ? argv[2] : "");
  } catch (const std::exception& e) {
    std::cerr << argv[0] << ": " << e.what() << '\n';
    return 2;
  }
}
