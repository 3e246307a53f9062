// Packet captures: the frame encoding against hand-worked examples, and
// `safs-sim run --pcap` read back byte by byte: one record per packet the
// port sent, headers consistent with the simulator's own fields.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "capture/frame_encoder.h"
#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace safs;
using namespace safs::capture;
using safs::testing::contains;
using safs::testing::read_text;
using safs::testing::run_cli;

std::uint32_t be32(const std::uint8_t* p) {
  return std::uint32_t{p[0]} << 24 | std::uint32_t{p[1]} << 16 | std::uint32_t{p[2]} << 8 | p[3];
}

// The worked example of an IPv4 header checksum that many references use:
// 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7.
TEST(FrameEncoder, Ipv4ChecksumOfTheWorkedExample) {
  const std::uint8_t header[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                   0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
  EXPECT_EQ(ipv4_checksum(header, sizeof header), 0xb861);
}

TEST(FrameEncoder, CarriesPriorityEcnAndTheSimulatorsFields) {
  Packet p;
  p.kind = PacketKind::kControl;
  p.message_type = 3;
  p.priority = 6;
  p.ecn_capable = true;
  p.ce = true;
  p.flow_id = 77;
  p.src_host = 5;
  p.dst_host = 2;
  p.seq = 0x1'0000'0010;  // above 32 bits: TCP shows the low half, the shim all of it
  p.ack = 9;
  p.wire_bytes = 78;  // a bare ACK with the default overhead
  p.words = {1, 2, 3, 0xffffffffffffffff};
  EncodedFrame f;
  encode_frame(p, Layer4::kTcp, f);
  EXPECT_EQ(f.captured_bytes, kEthernetBytes + kIpv4Bytes + kTcpBytes + kShimBytes);
  EXPECT_EQ(f.frame_bytes, f.captured_bytes);  // 78 - 24 is shorter than what is captured
  const std::uint8_t* ip = f.bytes.data() + kEthernetBytes;
  EXPECT_EQ(ip[1] >> 2, 6 << 3);                // DSCP CS6
  EXPECT_EQ(ip[1] & 3, 3);                      // CE
  EXPECT_EQ(ip[9], 6);                          // TCP
  EXPECT_EQ(ipv4_checksum(ip, kIpv4Bytes), 0);  // a header with its checksum sums to zero
  EXPECT_EQ(be32(ip + 12), (10u << 24) | 5u);
  EXPECT_EQ(be32(ip + 16), (10u << 24) | 2u);
  const std::uint8_t* tcp = ip + kIpv4Bytes;
  EXPECT_EQ(tcp[0] << 8 | tcp[1], kSafsPort);  // the higher host has the fixed port
  EXPECT_EQ(be32(tcp + 4), 0x10u);
  const std::uint8_t* shim = tcp + kTcpBytes;
  EXPECT_EQ(std::memcmp(shim, "SFS1", 4), 0);
  EXPECT_EQ(shim[4], 1);  // control
  EXPECT_EQ(shim[5], 3);
  EXPECT_EQ(shim[7], 3);  // ECT and CE
  EXPECT_EQ(be32(shim + 8), 77u);
  EXPECT_EQ(be32(shim + 16), 1u);
  EXPECT_EQ(be32(shim + 20), 0x10u);
  EXPECT_EQ(be32(shim + 56), 0xffffffffu);

  encode_frame(p, Layer4::kUdp, f);
  EXPECT_EQ(f.bytes[kEthernetBytes + 9], 17);  // UDP
  EXPECT_EQ(std::memcmp(f.bytes.data() + kEthernetBytes + kIpv4Bytes + kUdpBytes, "SFS1", 4), 0);
}

struct Capture {
  std::uint32_t magic = 0, link_type = 0;
  std::size_t records = 0, data_records = 0, bad = 0;
};

Capture read_capture(const fs::path& path, std::uint8_t protocol) {
  const std::string bytes = read_text(path);
  Capture c;
  if (bytes.size() < 24) return c;
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::memcpy(&c.magic, data, 4);
  std::memcpy(&c.link_type, data + 20, 4);
  std::uint64_t last_ns = 0;
  for (std::size_t at = 24; at + 16 <= bytes.size();) {
    std::uint32_t header[4];
    std::memcpy(header, data + at, 16);
    const std::uint64_t ns = std::uint64_t{header[0]} * 1'000'000'000 + header[1];
    const std::uint8_t* frame = data + at + 16;
    const std::uint8_t* ip = frame + kEthernetBytes;
    const std::size_t l4 = protocol == 6 ? kTcpBytes : kUdpBytes;
    const std::uint8_t* shim = ip + kIpv4Bytes + l4;
    const bool ok = ns >= last_ns && header[2] == kEthernetBytes + kIpv4Bytes + l4 + kShimBytes &&
                    header[3] >= header[2] && ip[9] == protocol &&
                    ipv4_checksum(ip, kIpv4Bytes) == 0 && std::memcmp(shim, "SFS1", 4) == 0 &&
                    (ip[1] >> 5) == shim[6] &&                     // DSCP class = priority
                    ((ip[1] & 3) == 3) == ((shim[7] & 2) != 0) &&  // CE both ways
                    be32(ip + 16) == (10u << 24);                  // all to host 0
    if (!ok) ++c.bad;
    if (shim[4] == 0) ++c.data_records;
    ++c.records;
    last_ns = ns;
    at += 16 + header[2];
  }
  return c;
}

class PcapRun : public ::testing::TestWithParam<const char*> {};

TEST_P(PcapRun, RecordsEveryPacketThePortSent) {
  const std::string transport = GetParam();
  const fs::path out = safs::testing::process_temp_dir() / ("safs-pcap-" + transport);
  const fs::path pcap = safs::testing::process_temp_dir() / ("safs-pcap-" + transport + ".pcap");
  fs::remove_all(out);
  fs::remove(pcap);
  const std::string scenario = std::string(SAFS_SOURCE_DIR) + "/scenarios/examples/incast.toml";
  const auto r = run_cli("run " + scenario + " --quiet --transport " + transport + " --out " +
                         out.string() + " --pcap 'switch->host0' " + pcap.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const auto summary = nlohmann::json::parse(read_text(out / "summary.json"));
  const Capture c = read_capture(pcap, transport == "homa" ? 17 : 6);
  EXPECT_EQ(c.magic, 0xa1b23c4du);  // nanosecond timestamps
  EXPECT_EQ(c.link_type, 1u);       // Ethernet
  EXPECT_EQ(c.bad, 0u);
  // Every flow goes to host 0 and nothing is lost: each data packet sent
  // crosses the port once.
  EXPECT_EQ(c.data_records, summary["transport_stats"]["data_packets"].get<std::size_t>());
  EXPECT_GT(c.records, 0u);
  EXPECT_FALSE(fs::exists(pcap.string() + ".partial"));
}

INSTANTIATE_TEST_SUITE_P(Transports, PcapRun, ::testing::Values("dctcp", "safs", "homa"));

TEST(PcapRun, BadPortsOrAnExistingFileAreRefusedBeforeAnythingIsWritten) {
  const std::string scenario = std::string(SAFS_SOURCE_DIR) + "/scenarios/examples/incast.toml";
  const fs::path out = safs::testing::process_temp_dir() / "safs-pcap-bad";
  const fs::path pcap = safs::testing::process_temp_dir() / "safs-pcap-bad.pcap";
  fs::remove_all(out);
  fs::remove(pcap);
  auto r = run_cli("run " + scenario + " --quiet --out " + out.string() + " --pcap nowhere " +
                   pcap.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--pcap: no port named 'nowhere'")) << r.output;
  r = run_cli("run " + scenario + " --quiet --out " + out.string() + " --pcap none " +
              pcap.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "no port to capture")) << r.output;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(pcap));
  std::ofstream(pcap) << "mine";
  r = run_cli("run " + scenario + " --quiet --out " + out.string() + " --pcap switches " +
              pcap.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "exists; choose another name")) << r.output;
  EXPECT_EQ(read_text(pcap), "mine");
  EXPECT_FALSE(fs::exists(out));
  r = run_cli("run " + scenario + " --quiet --out " + out.string() + " --pcap switches");
  EXPECT_EQ(r.exit_code, 2) << r.output;  // PORTS without FILE
}

}  // namespace
