// Least-laxity-first over strict priorities (dctcp-llf): the window
// transport with DCTCP underneath, whose urgent flows send each segment at a
// level chosen from the flow's laxity when it leaves, so a flow climbs the
// ladder of priority levels as its slack shrinks (laxity_options.h). The
// spirit of MFS (2026), a reverse multi-level queue that promotes flows as
// their laxity shrinks, on the 8 levels of a commodity switch; least laxity
// first is Mok's (MIT PhD thesis, 1983). Background flows stay at 0, urgent
// ACKs at urgent_priority. See docs/transports.md ("dctcp-llf").
#pragma once

#include <memory>

#include "transport/window/laxity_options.h"
#include "transport/window/window_transport.h"

namespace safs {

class LaxityTransport final : public WindowTransport {
 public:
  LaxityTransport(TransportEnv& env, const WindowConfig& window, const LaxityLevels& ladder,
                  std::unique_ptr<CongestionControl> control);

  // The level an urgent flow's next segment takes now (tests).
  std::uint8_t send_level(std::uint32_t flow_id) const;

 private:
  void on_sender_start(SenderFlow& flow) override;
  SendGate send_gate(SenderFlow& flow) override;

  // Deadline - now - the unacknowledged bytes at the path's bottleneck rate.
  TimePs laxity_ps(const SenderFlow& flow) const;
  std::uint8_t level(const SenderFlow& flow) const;

  LaxityLevels ladder_;
  std::uint8_t top_level_;
};

}  // namespace safs
