// `safs-sim run --pcap PORTS FILE`: the packets the chosen ports transmit,
// as a pcap file (nanosecond timestamps, Ethernet link type) that Wireshark
// and tshark read. Written to FILE.partial through a fixed buffer (no
// allocation per packet) and renamed to FILE when the run is done.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "capture/frame_encoder.h"
#include "net/packet_tap.h"

namespace safs::capture {

class PcapWriter final : public PacketTap {
 public:
  // Throws std::runtime_error if FILE.partial cannot be created.
  PcapWriter(std::string path, Layer4 layer4);
  ~PcapWriter() override;  // an unfinished capture is removed
  PcapWriter(const PcapWriter&) = delete;
  PcapWriter& operator=(const PcapWriter&) = delete;

  void on_transmit(const Port& port, const Packet& packet, TimePs at) override;
  // Flushes, closes and renames FILE.partial to FILE. Throws
  // std::runtime_error on a write error (a full disk).
  void finish();
  std::uint64_t packets() const { return packets_; }

 private:
  void append(const void* data, std::size_t bytes);
  void flush();

  std::string path_;
  std::string partial_path_;
  Layer4 layer4_;
  std::FILE* file_ = nullptr;
  std::vector<std::uint8_t> buffer_;
  std::size_t used_ = 0;
  bool write_failed_ = false;
  std::uint64_t packets_ = 0;
  EncodedFrame frame_;
};

}  // namespace safs::capture
