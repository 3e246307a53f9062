#include "case_file.h"

#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <stdexcept>

namespace safs_validation {

namespace {

template <typename T>
std::function<void(std::istringstream&)> reader(T& field) {
  return [&field](std::istringstream& in) { in >> field; };
}

}  // namespace

CaseSpec read_case_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) throw std::runtime_error(path + ": cannot open");
  CaseSpec spec;
  const std::map<std::string, std::function<void(std::istringstream&)>> keys = {
      {"topology", reader(spec.topology)},
      {"hosts", reader(spec.hosts)},
      {"hosts_per_leaf", reader(spec.hosts_per_leaf)},
      {"leaves", reader(spec.leaves)},
      {"spines", reader(spec.spines)},
      {"link_gbps", reader(spec.link_gbps)},
      {"fabric_link_gbps", reader(spec.fabric_link_gbps)},
      {"link_delay_us", reader(spec.link_delay_us)},
      {"mtu_bytes", reader(spec.mtu_bytes)},
      {"header_bytes", reader(spec.header_bytes)},
      {"port_buffer_bytes", reader(spec.port_buffer_bytes)},
      {"ecn_threshold_bytes", reader(spec.ecn_threshold_bytes)},
      {"transport", reader(spec.transport)},
      {"initial_cwnd_packets", reader(spec.initial_cwnd_packets)},
      {"rto_min_us", reader(spec.rto_min_us)},
      {"dupack_threshold", reader(spec.dupack_threshold)},
      {"shift_g", reader(spec.shift_g)},
      {"initial_alpha", reader(spec.initial_alpha)},
      {"queue_port", reader(spec.queue_port)},
      {"recovery", reader(spec.recovery)},
      {"dctcp_floor", reader(spec.dctcp_floor)},
      {"sack", reader(spec.sack)},
      {"stop_ms", reader(spec.stop_ms)},
  };
  std::string line;
  int number = 0;
  while (std::getline(file, line)) {
    ++number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "flow") {
      FlowSpec flow;
      in >> flow.src >> flow.dst >> flow.size_bytes >> flow.start_us;
      spec.flows.push_back(flow);
    } else if (const auto it = keys.find(key); it != keys.end()) {
      it->second(in);
    } else {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": unknown key '" + key + "'");
    }
    if (in.fail()) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": bad value for '" + key +
                               "'");
    }
  }
  if (spec.flows.empty()) throw std::runtime_error(path + ": no flows");
  if (spec.transport != "dctcp" && spec.transport != "reno") {
    throw std::runtime_error(path + ": transport must be dctcp or reno");
  }
  if (spec.recovery != "prr" && spec.recovery != "classic") {
    throw std::runtime_error(path + ": recovery must be prr or classic");
  }
  if (spec.topology != "star" && spec.topology != "leaf_spine") {
    throw std::runtime_error(path + ": topology must be star or leaf_spine");
  }
  for (const FlowSpec& flow : spec.flows) {
    if (flow.src >= spec.num_hosts() || flow.dst >= spec.num_hosts() || flow.src == flow.dst) {
      throw std::runtime_error(path + ": flow between bad hosts");
    }
  }
  return spec;
}

}  // namespace safs_validation
