// Sees every packet a port starts to transmit, e.g. to write a packet
// capture. Never changes what the network does.
#pragma once

#include "base/time.h"
#include "net/packet.h"

namespace safs {

class Port;

class PacketTap {
 public:
  virtual ~PacketTap() = default;
  // `packet` is valid only during the call; `at` is when its first bit
  // leaves the port.
  virtual void on_transmit(const Port& port, const Packet& packet, TimePs at) = 0;
};

}  // namespace safs
