// libFuzzer target for the scenario loader: any text must load or be refused
// with a ScenarioError that says what was wrong; never crash, hang, or throw
// anything else (which safs-sim would report as a bare exit 1). What loads
// must keep the loader's promises: hosts enough, flows between distinct
// hosts in range. Leading lines "--set key=value" are applied as the CLI's
// overrides. Seed corpus: the files in scenarios/ (scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/scenario.h"
#include "workload/bulk_chain.h"
#include "workload/flow_schedule.h"

namespace {

constexpr std::string_view kOverridePrefix = "--set ";

bool host_pair_ok(int src, int dst, int hosts) {
  return src >= 0 && dst >= 0 && src < hosts && dst < hosts && src != dst;
}

void check_promises(const safs::ExperimentConfig& config) {
  const int hosts = config.topology.num_hosts();
  if (hosts < 2) std::abort();
  for (const safs::ListedFlows* listed : config.workloads.all<safs::ListedFlows>()) {
    for (const safs::FlowSpec& flow : listed->flows) {
      if (!host_pair_ok(flow.src, flow.dst, hosts)) std::abort();
    }
  }
  for (const safs::BulkTraffic* bulk : config.workloads.all<safs::BulkTraffic>()) {
    for (const safs::BulkSpec& chain : bulk->chains) {
      if (!host_pair_ok(chain.src, chain.dst, hosts)) std::abort();
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  while (input.starts_with(kOverridePrefix)) {
    const std::size_t end = input.find('\n');
    overrides.emplace_back(input.substr(kOverridePrefix.size(), end - kOverridePrefix.size()));
    input = end == std::string_view::npos ? std::string_view() : input.substr(end + 1);
  }
  try {
    check_promises(safs::parse_scenario(std::string(input), "fuzz.toml", overrides));
  } catch (const safs::ScenarioError& e) {
    if (std::string_view(e.what()).empty()) std::abort();
  }
  return 0;
}
