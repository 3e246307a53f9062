#include "transport/registry.h"

#include "transport/tcp/tcp_transport.h"

namespace safs {

namespace {

std::vector<ParamSpec> tcp_params() {
  return {
      {"initial_cwnd_packets", "packets", 10, 1, 1e6, true, "Initial window (RFC 6928)."},
      {"rto_min_us", "us", 1000, 1, 1e7, false,
       "Minimum retransmission timeout. Datacenter-tuned (Vasudevan et al., SIGCOMM 2009, show "
       "sub-millisecond RTOs are safe); Linux's 200 ms would dwarf every FCT here."},
      {"rto_max_us", "us", 64000, 1, 1e8, false, "Cap on the backed-off timeout."},
      {"dupack_threshold", "ACKs", 3, 1, 1000, true, "Duplicate ACKs that trigger fast retransmit (RFC 5681)."},
  };
}

TcpConfig tcp_config(const TransportParams& params) {
  TcpConfig config;
  config.initial_cwnd_packets = static_cast<std::uint32_t>(params.get("initial_cwnd_packets"));
  config.rto_min_ps = us_to_ps(params.get("rto_min_us"));
  config.rto_max_ps = us_to_ps(params.get("rto_max_us"));
  config.dupack_threshold = static_cast<std::uint32_t>(params.get("dupack_threshold"));
  return config;
}

std::vector<ParamSpec> dctcp_params() {
  std::vector<ParamSpec> params = tcp_params();
  params.push_back({"shift_g", "", 4, 0, 10, true,
                    "Alpha gain g = 2^-shift_g; 4 gives g = 1/16 (RFC 8257, Linux dctcp_shift_g)."});
  params.push_back({"initial_alpha", "", 1.0, 0, 1, false,
                    "Alpha before the first window (Linux dctcp_alpha_on_init = 1024/1024)."});
  return params;
}

std::vector<TransportInfo> make_registry() {
  std::vector<TransportInfo> list;
  list.push_back({"dctcp", "DCTCP (RFC 8257): ECN-marked fraction scales one window cut per RTT.",
                  dctcp_params(), [](TransportEnv& env, const TransportParams& params) {
                    const auto shift = static_cast<unsigned>(params.get("shift_g"));
                    auto control = std::make_unique<DctcpControl>(shift, 2 * env.mtu_bytes);
                    TcpConfig config = tcp_config(params);
                    config.initial_alpha =
                        static_cast<std::uint32_t>(params.get("initial_alpha") * kAlphaOne + 0.5);
                    return std::make_unique<TcpTransport>(env, config, std::move(control));
                  }});
  list.push_back({"reno", "TCP NewReno without ECN: the loss-based reference.", tcp_params(),
                  [](TransportEnv& env, const TransportParams& params) {
                    return std::make_unique<TcpTransport>(env, tcp_config(params),
                                                          std::make_unique<RenoControl>());
                  }});
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
