#include "transport/registry.h"

#include "transport/homa/homa_transport.h"
#include "transport/pfabric/pfabric_transport.h"
#include "transport/safs/safs_transport.h"
#include "transport/window/window_transport.h"

namespace safs {

namespace {

std::vector<ParamSpec> window_params() {
  return {
      {"initial_cwnd_packets", "packets", 10, 1, 1e6, true, "Initial window (RFC 6928)."},
      {"rto_min_us", "us", 1000, 1, 1e7, false,
       "Minimum retransmission timeout. Datacenter-tuned (Vasudevan et al., SIGCOMM 2009, show "
       "sub-millisecond RTOs are safe); Linux's 200 ms would dwarf every FCT here."},
      {"rto_max_us", "us", 64000, 1, 1e8, false, "Cap on the backed-off timeout."},
      {"dupack_threshold", "ACKs", 3, 1, 1000, true,
       "Duplicate ACKs that trigger fast retransmit (RFC 5681)."},
  };
}

WindowConfig window_config(const TransportParams& params) {
  WindowConfig config;
  config.initial_cwnd_packets = static_cast<std::uint32_t>(params.get("initial_cwnd_packets"));
  config.rto_min_ps = us_to_ps(params.get("rto_min_us"));
  config.rto_max_ps = us_to_ps(params.get("rto_max_us"));
  config.dupack_threshold = static_cast<std::uint32_t>(params.get("dupack_threshold"));
  return config;
}

std::vector<ParamSpec> dctcp_params() {
  std::vector<ParamSpec> params = window_params();
  params.push_back(
      {"shift_g", "", 4, 0, 10, true,
       "Alpha gain g = 2^-shift_g; 4 gives g = 1/16 (RFC 8257, Linux dctcp_shift_g)."});
  params.push_back({"initial_alpha", "", 1.0, 0, 1, false,
                    "Alpha before the first window (Linux dctcp_alpha_on_init = 1024/1024)."});
  return params;
}

std::vector<ParamSpec> safs_params() {
  std::vector<ParamSpec> params = dctcp_params();
  const std::vector<ParamSpec> own = {
      {"usable_fraction", "", 0.97, 0.1, 1, false,
       "Share of the receiver link the grants may fill (1 - u); the rest absorbs unscheduled "
       "bytes and estimation error. Ours (protocols.md §5.3 suggests u = 0.05)."},
      {"overload_usable_fraction", "", 1.0, 0.1, 1, false,
       "The same when the urgent set cannot all be on time: lateness is GPU idle time, so by "
       "default every bit goes to urgent work (ours; docs/safs.md)."},
      {"background_floor_fraction", "", 0.01, 0, 0.5, false,
       "Share of the budget reserved for background flows when any exist, so no stream of "
       "urgent work starves them forever (ours)."},
      {"demand_margin", "", 1.1, 1, 3, false,
       "beta: ask for this much more than the bare no-bubble rate (protocols.md §5.2)."},
      {"headroom_us", "us", 10, 0, 1e6, false,
       "Subtracted from every flow's time left: control delay + RTT + one MTU + epsilon "
       "(protocols.md §5.2), sized for 100 Gbit/s leaf-spine paths."},
      {"rtt_us", "us", 10, 0, 1e6, false,
       "RTT used for the low-slack threshold 2 RTT + R/(10 C) (protocols.md §5.3)."},
      {"change_threshold", "", 0.1, 0, 1, false,
       "theta: a grant is re-sent when the rate moves by more than this fraction (protocols.md "
       "§5.4)."},
      {"lease_us", "us", 500, 1, 1e7, false,
       "Grant validity. Longer than protocols.md's max(8 RTT, 100 us): decreases are sent "
       "explicitly, so the lease only bounds how long a stale rate survives a failure, and a "
       "longer one amortises control further."},
      {"refresh_margin_us", "us", 20, 0, 1e6, false,
       "Re-send a grant when less than this is left of its lease (about 2 RTT)."},
      {"control_delay_us", "us", 5, 0, 1e6, false,
       "Bound on one-way grant delivery: increases wait this long after decreases (break before "
       "make)."},
      {"reallocate_every_us", "us", 20, 1, 1e6, false,
       "Reallocate at least this often while flows are active (demands drift)."},
      {"unscheduled_bytes", "bytes", 0, 0, 1e12, true,
       "Bytes a flow sends before its first grant; 0 = one bandwidth-delay product of its path."},
      {"batch_changes_us", "us", 0, 0, 1e4, false,
       "Arrivals, timestamp moves and sender reports at a receiver within this window share one "
       "reallocation, so a burst of N arrivals costs one round of grants, not N (completions "
       "reallocate at once)."},
      {"first_grant_wait_us", "us", 200, 0, 1e7, false,
       "How long a flow that never got a grant waits before falling back to its window alone."},
      {"background_srpt", "", 0, 0, 1, true,
       "1: background flows share leftover by shortest remaining first; 0: max-min fair."},
      {"urgent_first", "", 0, 0, 1, true,
       "0: urgent flows with slack get just their no-bubble rate and background the rest (just in "
       "time). 1: leftover goes to urgent flows first, so they finish as early as EDF at line "
       "rate."},
  };
  params.insert(params.end(), own.begin(), own.end());
  return params;
}

// SAFS flows are paced below what their receiver can take, so their DCTCP
// starts from alpha = 0 (no evidence of congestion yet) instead of Linux's
// conservative 1; the first marked window still sets alpha from the marks.
std::vector<ParamSpec> safs_params_with_defaults() {
  std::vector<ParamSpec> params = safs_params();
  for (ParamSpec& p : params) {
    if (p.key == "initial_alpha") {
      p.default_value = 0.0;
      p.doc =
          "Alpha before the first window. 0 for SAFS: its flows are paced below the receiver's "
          "capacity, so a start-up burst should not halve their windows (DCTCP uses 1).";
    }
  }
  return params;
}

SafsConfig safs_config(const TransportParams& p) {
  SafsConfig c;
  core::ReceiverConfig& r = c.receiver;
  r.allocator.usable_fraction = p.get("usable_fraction");
  r.allocator.overload_usable_fraction = p.get("overload_usable_fraction");
  r.allocator.background_floor_fraction = p.get("background_floor_fraction");
  r.allocator.demand.margin = p.get("demand_margin");
  r.allocator.demand.headroom_ps = us_to_ps(p.get("headroom_us"));
  r.allocator.rtt_ps = us_to_ps(p.get("rtt_us"));
  r.allocator.background = p.get("background_srpt") != 0
                               ? core::BackgroundPolicy::kShortestRemainingFirst
                               : core::BackgroundPolicy::kMaxMinFair;
  r.grants.change_threshold = p.get("change_threshold");
  r.grants.validity_ps = us_to_ps(p.get("lease_us"));
  r.grants.refresh_margin_ps = us_to_ps(p.get("refresh_margin_us"));
  r.grants.control_delay_ps = us_to_ps(p.get("control_delay_us"));
  r.reallocate_every_ps = us_to_ps(p.get("reallocate_every_us"));
  r.allocator.urgent_first = p.get("urgent_first") != 0;
  c.unscheduled_bytes = static_cast<std::uint64_t>(p.get("unscheduled_bytes"));
  c.first_grant_wait_ps = us_to_ps(p.get("first_grant_wait_us"));
  c.batch_changes_ps = us_to_ps(p.get("batch_changes_us"));
  return c;
}

std::unique_ptr<DctcpControl> dctcp_control(const TransportEnv& env,
                                            const TransportParams& params) {
  return std::make_unique<DctcpControl>(static_cast<unsigned>(params.get("shift_g")),
                                        2 * env.mtu_bytes);
}

std::vector<ParamSpec> d2tcp_params() {
  std::vector<ParamSpec> params = dctcp_params();
  params.push_back(
      {"d_min", "", 0.5, 0.01, 1, false,
       "Lower clamp of the deadline imminence d = Tc / D (D2TCP paper, SIGCOMM 2012)."});
  params.push_back({"d_max", "", 2.0, 1, 100, false,
                    "Upper clamp of d; also used once the deadline has passed (D2TCP paper)."});
  return params;
}

WindowConfig dctcp_window_config(const TransportParams& params) {
  WindowConfig config = window_config(params);
  config.initial_alpha = static_cast<std::uint32_t>(params.get("initial_alpha") * kAlphaOne + 0.5);
  return config;
}

std::vector<TransportInfo> make_registry() {
  std::vector<TransportInfo> list;
  list.push_back({"dctcp", "DCTCP (RFC 8257): ECN-marked fraction scales one window cut per RTT.",
                  dctcp_params(), [](TransportEnv& env, const TransportParams& params) {
                    const auto shift = static_cast<unsigned>(params.get("shift_g"));
                    auto control = std::make_unique<DctcpControl>(shift, 2 * env.mtu_bytes);
                    WindowConfig config = window_config(params);
                    config.initial_alpha =
                        static_cast<std::uint32_t>(params.get("initial_alpha") * kAlphaOne + 0.5);
                    return std::make_unique<WindowTransport>(env, config, std::move(control));
                  }});
  list.push_back(
      {"d2tcp", "D2TCP: DCTCP whose window cut alpha^d grows gentler as the deadline nears.",
       d2tcp_params(), [](TransportEnv& env, const TransportParams& params) {
         auto control = std::make_unique<D2tcpControl>(static_cast<unsigned>(params.get("shift_g")),
                                                       2 * env.mtu_bytes, params.get("d_min"),
                                                       params.get("d_max"));
         return std::make_unique<WindowTransport>(env, dctcp_window_config(params),
                                                  std::move(control));
       }});
  list.push_back({"homa",
                  "Homa: receiver-driven SRPT grants after a blind first RTTbytes, over 8 switch "
                  "priority levels (docs/transports.md).",
                  homa_params(), make_homa_transport});
  list.push_back({"pfabric",
                  "pFabric: switches serve the smallest remaining size and drop the largest; hosts "
                  "start at line rate and recover by timeouts only.",
                  pfabric_params(), make_pfabric_transport, make_pfabric_queue});
  list.push_back({"reno", "TCP NewReno without ECN: the loss-based reference.", window_params(),
                  [](TransportEnv& env, const TransportParams& params) {
                    return std::make_unique<WindowTransport>(env, window_config(params),
                                                             std::make_unique<RenoControl>());
                  }});
  list.push_back(
      {"safs", "SAFS: receiver-driven no-bubble rate grants over DCTCP (docs/safs.md).",
       safs_params_with_defaults(), [](TransportEnv& env, const TransportParams& params) {
         return std::make_unique<SafsTransport>(env, dctcp_window_config(params),
                                                safs_config(params), dctcp_control(env, params));
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
