#include "transport/registry.h"

#include <stdexcept>
#include <string>

#include "transport/homa/homa_transport.h"
#include "transport/pfabric/pfabric_queue.h"
#include "transport/pfabric/pfabric_transport.h"
#include "transport/safs/safs_transport.h"
#include "transport/window/laxity_transport.h"
#include "transport/window/window_transport.h"

namespace safs {

namespace {

std::unique_ptr<DctcpControl> dctcp_control(const TransportEnv& env, const DctcpOptions& o) {
  return std::make_unique<DctcpControl>(o.shift_g, 2 * env.mtu_bytes);
}

std::unique_ptr<Transport> make_dctcp(TransportEnv& env, const DctcpOptions& o) {
  return std::make_unique<WindowTransport>(env, o.window, dctcp_control(env, o));
}

std::unique_ptr<Transport> make_d2tcp(TransportEnv& env, const D2tcpOptions& o) {
  auto control =
      std::make_unique<D2tcpControl>(o.dctcp.shift_g, 2 * env.mtu_bytes, o.d_min, o.d_max);
  return std::make_unique<WindowTransport>(env, o.dctcp.window, std::move(control));
}

// The entry `name`'s maker (its errors name its section).
MakeTransport<PFabricConfig> make_pfabric(std::string_view name) {
  return [name](TransportEnv& env, const PFabricConfig& c) -> std::unique_ptr<Transport> {
    const std::uint64_t packet_bytes = std::uint64_t{env.mtu_bytes} + env.header_bytes;
    if (c.switch_buffer_bytes > 0 && c.switch_buffer_bytes < packet_bytes) {
      throw std::invalid_argument("transport." + std::string(name) +
                                  ".buffer_bytes: " + std::to_string(c.switch_buffer_bytes) +
                                  " is smaller than one full packet (mtu_bytes + header_bytes = " +
                                  std::to_string(packet_bytes) +
                                  "): every packet would be dropped");
    }
    return std::make_unique<PFabricTransport>(env, c);
  };
}

// Every urgent level must stay above background at 0.
std::unique_ptr<Transport> make_dctcp_llf(TransportEnv& env, const DctcpLlfOptions& o) {
  const WindowConfig& window = o.dctcp.window;
  if (o.laxity.levels > window.urgent_priority) {
    throw std::invalid_argument(
        "transport.dctcp-llf.laxity_levels: " + std::to_string(o.laxity.levels) +
        " levels below urgent_priority = " + std::to_string(window.urgent_priority) +
        " would reach background's level 0; expected at most " +
        std::to_string(window.urgent_priority));
  }
  return std::make_unique<LaxityTransport>(env, window, o.laxity, dctcp_control(env, o.dctcp));
}

// Switch ports get a PFabricQueue with the `buffer_bytes` budget; host NICs
// keep the default unlimited strict-priority queue (the host transport orders
// its own data; ACKs are pushed at the top level).
std::unique_ptr<QueueDiscipline> pfabric_queue(const QueueSite& site, const PFabricConfig& c) {
  if (site.at_host) return make_strict_priority_queue(site);
  BufferLimits limits;
  limits.port_bytes =
      c.switch_buffer_bytes > 0 ? c.switch_buffer_bytes : site.config->port_buffer_bytes;
  limits.shared = site.shared;
  return std::make_unique<PFabricQueue>(limits);
}

std::vector<TransportInfo> make_registry() {
  std::vector<TransportInfo> list;
  list.push_back(transport_entry<DctcpOptions>(
      "dctcp", "DCTCP (RFC 8257): ECN-marked fraction scales one window cut per RTT.",
      dctcp_knobs(), make_dctcp));
  list.push_back(transport_entry<DctcpOptions>(
      "dctcp-prio",
      "DCTCP with urgent flows (data and ACKs) in a strict-priority class above background.",
      dctcp_prio_knobs(), make_dctcp));
  list.push_back(transport_entry<DctcpLlfOptions>(
      "dctcp-llf",
      "DCTCP whose urgent packets climb 6 priority levels as their laxity shrinks (least "
      "laxity first).",
      dctcp_llf_knobs(), make_dctcp_llf));
  list.push_back(transport_entry<D2tcpOptions>(
      "d2tcp", "D2TCP: DCTCP whose window cut alpha^d grows gentler as the deadline nears.",
      d2tcp_knobs(), make_d2tcp));
  list.push_back(transport_entry<D2tcpOptions>(
      "d2tcp-prio",
      "D2TCP with urgent flows (data and ACKs) in a strict-priority class above background.",
      d2tcp_prio_knobs(), make_d2tcp));
  list.push_back(transport_entry<HomaConfig>(
      "homa",
      "Homa: receiver-driven SRPT grants after a blind first RTTbytes, over 8 switch priority "
      "levels (docs/transports.md).",
      homa_knobs(), [](TransportEnv& env, const HomaConfig& c) -> std::unique_ptr<Transport> {
        return std::make_unique<HomaTransport>(env, c);
      }));
  list.push_back(transport_entry<PFabricConfig>(
      "pfabric",
      "pFabric: switches serve the smallest remaining size and drop the largest; hosts start at "
      "line rate and recover by timeouts only.",
      pfabric_knobs(), make_pfabric("pfabric"), pfabric_queue));
  list.push_back(transport_entry<PFabricConfig>(
      "pfabric-edf",
      "pFabric ranked by deadline, earliest first (EDF); flows without one last, by remaining "
      "size.",
      pfabric_edf_knobs(), make_pfabric("pfabric-edf"), pfabric_queue));
  list.push_back(transport_entry<WindowConfig>(
      "reno", "TCP NewReno without ECN: the loss-based reference.", reno_knobs(),
      [](TransportEnv& env, const WindowConfig& c) -> std::unique_ptr<Transport> {
        return std::make_unique<WindowTransport>(env, c, std::make_unique<RenoControl>());
      }));
  list.push_back(transport_entry<SafsOptions>(
      "safs", "SAFS: receiver-driven no-bubble rate grants over DCTCP (docs/safs.md).",
      safs_knobs(), [](TransportEnv& env, const SafsOptions& o) -> std::unique_ptr<Transport> {
        return std::make_unique<SafsTransport>(env, o.dctcp.window, o.safs,
                                               dctcp_control(env, o.dctcp));
      }));
  return list;
}

}  // namespace

const std::vector<TransportInfo>& all_transports() {
  static const std::vector<TransportInfo> registry = make_registry();
  return registry;
}

const TransportInfo* find_transport(std::string_view name) {
  for (const TransportInfo& info : all_transports()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

}  // namespace safs
