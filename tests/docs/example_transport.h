// The worked example of docs/adding-a-transport.md: a congestion control and
// a transport built on WindowTransport's hooks, and the registry entry that
// would make it selectable by name. The doc quotes the regions between
// "snippet:" markers verbatim; docs_snippet_test checks that they match.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>

#include "transport/registry.h"
#include "transport/window/window_transport.h"

namespace safs::example {

// [snippet:control]
// Classic ECN (RFC 3168): halve the window on an echo, at most once per
// window of data (WindowTransport enforces the once), never below two packets.
class EcnHalvingControl final : public CongestionControl {
 public:
  explicit EcnHalvingControl(std::uint32_t min_cwnd_bytes) : min_cwnd_bytes_(min_cwnd_bytes) {}

  bool ecn_capable() const override { return true; }
  void on_ack(CcState&, std::uint64_t, bool, std::uint64_t, std::uint64_t) const override {}
  std::uint64_t cwnd_after_echo(const CcState& cc, const FlowProgress&) const override {
    return std::max<std::uint64_t>(cc.cwnd_bytes / 2, min_cwnd_bytes_);
  }

 private:
  std::uint32_t min_cwnd_bytes_;
};
// [end-snippet]

// [snippet:transport]
// Every flow is held to a fixed rate at a fixed priority, on top of its
// window: the window mechanism (slow start, ECN response, retransmission)
// is WindowTransport's; this class only decides when a segment may leave.
class PacedTransport final : public WindowTransport {
 public:
  PacedTransport(TransportEnv& env, const WindowConfig& window,
                 std::unique_ptr<CongestionControl> control, std::uint64_t rate_bps);

 protected:
  void on_sender_start(SenderFlow& flow) override;
  SendGate send_gate(SenderFlow& flow) override;
  void on_segment_sent(SenderFlow& flow, Packet& packet) override;

 private:
  // This transport's state of a sending flow, kept in its SenderFlow.
  struct Pacing final : FlowExtension {
    TimePs next_send_ps = 0;  // earliest time of the next segment
  };

  std::uint64_t rate_bps_;
};
// [end-snippet]

// The options: every member initializer is the default of its knob.
struct PacedOptions {
  WindowConfig window;
  std::uint64_t rate_bps = 10'000'000'000;  // a tenth of a 100 Gbit/s link
};

// The registry entry: add this to make_registry() in src/transport/registry.cc.
KnobTable<PacedOptions> paced_knobs();
TransportInfo paced_transport_info();

}  // namespace safs::example
