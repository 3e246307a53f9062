#include "topology.h"

#include <utility>

#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-address-helper.h"
#include "ns3/ipv4-global-routing-helper.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/string.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

namespace safs_validation {

using namespace ns3;

namespace {

struct Builder {
  const CaseSpec& spec;
  Fabric& fabric;
  Ipv4AddressHelper addresses;
  std::map<Ptr<Node>, std::string> names;

  // One duplex link; a is the switch side when b is a host.
  void connect(Ptr<Node> a, Ptr<Node> b, double gbps, bool b_is_host, std::uint32_t host) {
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate",
                           DataRateValue(DataRate(static_cast<std::uint64_t>(gbps * 1e9))));
    p2p.SetDeviceAttribute("Mtu", UintegerValue(spec.mtu_bytes + 100));
    p2p.SetChannelAttribute(
        "Delay", TimeValue(PicoSeconds(static_cast<std::int64_t>(spec.link_delay_us * 1e6 + 0.5))));
    // One waiting packet in the device; the rest waits in the queue disc.
    p2p.SetQueue("ns3::DropTailQueue<Packet>", "MaxSize", StringValue("1p"));
    NetDeviceContainer devices = p2p.Install(a, b);

    for (std::uint32_t i = 0; i < 2; ++i) {
      const bool at_host = (i == 1 && b_is_host);
      TrafficControlHelper tc;
      if (at_host) {
        tc.SetRootQueueDisc("safs_validation::PortQueueDisc", "HeaderBytes",
                            UintegerValue(spec.header_bytes));
      } else {
        tc.SetRootQueueDisc("safs_validation::PortQueueDisc", "HeaderBytes",
                            UintegerValue(spec.header_bytes), "BufferBytes",
                            UintegerValue(spec.port_buffer_bytes), "MarkThresholdBytes",
                            UintegerValue(spec.ecn_threshold_bytes));
      }
      QueueDiscContainer discs = tc.Install(devices.Get(i));
      Ptr<PortQueueDisc> disc = DynamicCast<PortQueueDisc>(discs.Get(0));
      disc->SetDeviceQueue(DynamicCast<PointToPointNetDevice>(devices.Get(i))->GetQueue());
      const Ptr<Node> from = i == 0 ? a : b;
      const Ptr<Node> to = i == 0 ? b : a;
      fabric.ports[names[from] + "->" + names[to]] = disc;
    }
    Ipv4InterfaceContainer interfaces = addresses.Assign(devices);
    addresses.NewNetwork();
    if (b_is_host) fabric.host_address[host] = interfaces.GetAddress(1);
  }
};

}  // namespace

Fabric build_fabric(const CaseSpec& spec) {
  Fabric fabric;
  const std::uint32_t num_hosts = spec.num_hosts();
  fabric.hosts.Create(num_hosts);
  fabric.host_address.resize(num_hosts);
  Builder builder{spec, fabric, Ipv4AddressHelper("10.0.0.0", "255.255.255.252"), {}};
  for (std::uint32_t h = 0; h < num_hosts; ++h) {
    builder.names[fabric.hosts.Get(h)] = "host" + std::to_string(h);
  }
  InternetStackHelper internet;
  internet.Install(fabric.hosts);

  if (spec.topology == "star") {
    fabric.switches.Create(1);
    internet.Install(fabric.switches);
    builder.names[fabric.switches.Get(0)] = "switch";
    for (std::uint32_t h = 0; h < num_hosts; ++h) {
      builder.connect(fabric.switches.Get(0), fabric.hosts.Get(h), spec.link_gbps, true, h);
    }
  } else {  // leaf_spine, built in safs-sim's order
    fabric.switches.Create(spec.spines + spec.leaves);
    internet.Install(fabric.switches);
    for (std::uint32_t s = 0; s < spec.spines; ++s) {
      builder.names[fabric.switches.Get(s)] = "spine" + std::to_string(s);
    }
    for (std::uint32_t l = 0; l < spec.leaves; ++l) {
      const Ptr<Node> leaf = fabric.switches.Get(spec.spines + l);
      builder.names[leaf] = "leaf" + std::to_string(l);
      for (std::uint32_t h = 0; h < spec.hosts_per_leaf; ++h) {
        const std::uint32_t host = l * spec.hosts_per_leaf + h;
        builder.connect(leaf, fabric.hosts.Get(host), spec.link_gbps, true, host);
      }
      for (std::uint32_t s = 0; s < spec.spines; ++s) {
        builder.connect(leaf, fabric.switches.Get(s), spec.fabric_link_gbps, false, 0);
      }
    }
  }
  Ipv4GlobalRoutingHelper::PopulateRoutingTables();
  return fabric;
}

}  // namespace safs_validation
