#include "docs/example_transport.h"

namespace safs::example {

// [snippet:hooks]
PacedTransport::PacedTransport(TransportEnv& env, const WindowConfig& window,
                               std::unique_ptr<CongestionControl> control, std::uint64_t rate_bps)
    : WindowTransport(env, window, std::move(control)), rate_bps_(rate_bps) {}

void PacedTransport::on_sender_start(SenderFlow& flow) {
  flow.extension = make_extension<Pacing>();
}

// Called whenever the NIC is free and this flow's window is open.
WindowTransport::SendGate PacedTransport::send_gate(SenderFlow& flow) {
  const TimePs next = flow.ext<Pacing>().next_send_ps;
  if (next > env().sim.now()) return {false, 0, next};  // ask again at `next`
  return {true, 0};                                     // send now, at priority 0
}

// The segment is leaving: the next one may follow one serialisation time of
// this one at the configured rate.
void PacedTransport::on_segment_sent(SenderFlow& flow, Packet& packet) {
  TimePs& next = flow.ext<Pacing>().next_send_ps;
  next = std::max(next, env().sim.now()) + serialization_ps(packet.wire_bytes, rate_bps_);
}
// [end-snippet]

// [snippet:registry]
KnobTable<PacedOptions> paced_knobs() {
  KnobTable<PacedOptions> t;
  t.scaled("rate_gbps", "Gbit/s", 1e9, SAFS_FIELD(rate_bps), 0.001, 1e4,
           "Pacing rate of every flow (ours: a tenth of a 100 Gbit/s link).");
  t.integer("initial_cwnd_packets", "packets", SAFS_FIELD(window.initial_cwnd_packets), 1, 1e6,
            "Initial window (RFC 6928).");
  return t;
}

TransportInfo paced_transport_info() {
  return transport_entry<PacedOptions>(
      "paced", "Window TCP with classic ECN halving, every flow paced at a fixed rate.",
      paced_knobs(), [](TransportEnv& env, const PacedOptions& o) -> std::unique_ptr<Transport> {
        auto control = std::make_unique<EcnHalvingControl>(2 * env.mtu_bytes);
        return std::make_unique<PacedTransport>(env, o.window, std::move(control), o.rate_bps);
      });
}
// [end-snippet]

}  // namespace safs::example
