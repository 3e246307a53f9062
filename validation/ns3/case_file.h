// The network and flows of one fidelity case, as the runner writes them for
// the ns-3 side (one "key value" per line, one "flow src dst size start_us"
// line per flow). The safs-sim scenario is generated from the same case
// description, so every number here has a twin there.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace safs_validation {

struct FlowSpec {
  std::uint32_t src = 0;
  std::uint32_t dst = 0;
  std::uint64_t size_bytes = 0;
  double start_us = 0;
};

struct CaseSpec {
  std::string topology = "star";  // star | leaf_spine
  std::uint32_t hosts = 2;        // star
  std::uint32_t hosts_per_leaf = 1;
  std::uint32_t leaves = 2;
  std::uint32_t spines = 1;
  double link_gbps = 100;
  double fabric_link_gbps = 100;
  double link_delay_us = 1;
  std::uint32_t mtu_bytes = 4096;
  std::uint32_t header_bytes = 78;
  std::uint64_t port_buffer_bytes = 1000000;
  std::uint64_t ecn_threshold_bytes = 100000;
  std::string transport = "dctcp";  // dctcp | reno
  std::uint32_t initial_cwnd_packets = 10;
  double rto_min_us = 1000;
  std::uint32_t dupack_threshold = 3;
  std::uint32_t shift_g = 4;
  double initial_alpha = 1;
  // ns-3's loss and CWR recovery: prr (its default, and Linux's) or classic
  // (the window cut at once, as safs-sim with prr = false). A knob of the ns-3
  // side only, for diagnosis.
  std::string recovery = "prr";
  // Linux's two-segment floor under DCTCP's cut (1, the default: Linux is
  // the reference where it and ns-3 3.37, which has none, disagree); 0 for
  // stock ns-3. A knob of the ns-3 side only.
  std::uint32_t dctcp_floor = 1;
  // SACK (RFC 2018, RFC 6675 recovery): 1 as Linux and safs-sim by
  // default. A matched key: the runner writes both sides' value.
  std::uint32_t sack = 1;
  std::string queue_port;  // the port whose mean queue is reported
  double stop_ms = 1000;
  std::vector<FlowSpec> flows;

  std::uint32_t num_hosts() const { return topology == "star" ? hosts : hosts_per_leaf * leaves; }
};

// Reads a case file; throws std::runtime_error naming the line on bad input.
CaseSpec read_case_file(const std::string& path);

}  // namespace safs_validation
