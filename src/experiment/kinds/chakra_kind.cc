// [chakra]: MLCommons Chakra execution traces, one file per rank, as a
// compute workload (see workload/chakra/).
#include <filesystem>

#include "experiment/workload_kind.h"
#include "workload/chakra/chakra_file.h"
#include "workload/chakra/chakra_graph.h"
#include "workload/compute/compute_workload.h"

namespace safs {

namespace {

// Chakra traces are named PREFIX.RANK.et (ASTRA-sim's workload prefix).
constexpr int kMaxRanks = 4096;

struct ChakraOptions {
  std::string trace;
  int ranks = 0;
  std::vector<int> hosts;
};

KnobTable<ChakraOptions> chakra_knobs() {
  KnobTable<ChakraOptions> t;
  t.text("trace", SAFS_FIELD(trace),
         "Path prefix of an MLCommons Chakra execution trace: rank r reads PREFIX.r.et "
         "(Chakra's naming), length-delimited GlobalMetadata and Node messages (Chakra schema "
         "1.0.0; docs/workloads.md says how nodes become ops and transfers). Relative: each file "
         "is looked up next to the scenario file, then in the working directory.")
      .required();
  t.integer("ranks", "ranks", SAFS_FIELD(ranks), 0, kMaxRanks,
            "Number of ranks (files); 0 = every PREFIX.r.et from r = 0 up to the first missing "
            "one.");
  t.hosts("hosts", SAFS_FIELD(hosts), "Host of each rank, distinct; empty = rank r on host r.");
  return t;
}

std::string rank_file(const ChakraOptions& o, int r) {
  return o.trace + "." + std::to_string(r) + ".et";
}

std::vector<std::string> rank_paths(const SectionReader& section, const FileResolver& resolve,
                                    const ChakraOptions& o) {
  std::vector<std::string> paths;
  std::error_code error;
  for (int r = 0; o.ranks == 0 ? r < kMaxRanks : r < o.ranks; ++r) {
    const std::string path = resolve(rank_file(o, r));
    if (!std::filesystem::exists(path, error)) {
      if (o.ranks == 0 && r > 0) break;
      section.fail(r == 0 ? "trace" : "ranks",
                   path + ": no such file (rank " + std::to_string(r) + "'s trace)");
    }
    paths.push_back(path);
  }
  return paths;
}

std::vector<int> rank_hosts(const SectionReader& section, const ChakraOptions& o, int ranks,
                            int topology_hosts) {
  std::vector<int> hosts = o.hosts;
  if (hosts.empty()) {
    for (int r = 0; r < ranks; ++r) hosts.push_back(r);
  } else if (static_cast<int>(hosts.size()) != ranks) {
    section.fail("hosts", "gives " + std::to_string(hosts.size()) + " hosts for " +
                              std::to_string(ranks) + " ranks");
  }
  for (int r = 0; r < ranks; ++r) {
    if (hosts[r] >= topology_hosts) {
      section.fail(o.hosts.empty() ? "trace" : "hosts",
                   "rank " + std::to_string(r) + " needs host " + std::to_string(hosts[r]) +
                       "; the topology has " + std::to_string(topology_hosts) + " hosts");
    }
    for (int q = 0; q < r; ++q) {
      if (hosts[q] == hosts[r]) {
        section.fail("hosts", "host " + std::to_string(hosts[r]) + " is given to ranks " +
                                  std::to_string(q) + " and " + std::to_string(r) +
                                  "; each rank needs a host of its own");
      }
    }
  }
  return hosts;
}

void read_chakra(const SectionReader& section, const FileResolver& resolve,
                 ExperimentConfig& config) {
  const ChakraOptions o = chakra_knobs().read(section);
  if (!chakra_supported()) {
    section.fail("",
                 "this build of safs-sim lacks Chakra support (built without protobuf: "
                 "install libprotobuf-dev and protobuf-compiler, see scripts/setup.sh, and "
                 "rebuild)");
  }
  const std::vector<std::string> paths = rank_paths(section, resolve, o);
  const std::vector<int> hosts =
      rank_hosts(section, o, static_cast<int>(paths.size()), config.topology.num_hosts());
  ComputeGraph graph;
  try {
    std::vector<ChakraRank> ranks;
    for (const std::string& path : paths) ranks.push_back(load_chakra_rank(path));
    graph = chakra_graph(ranks, hosts);
  } catch (const std::invalid_argument& e) {
    section.fail("trace", e.what());
  }
  add_compute_job(section, std::move(graph), config);
}

}  // namespace

WorkloadKind chakra_kind() {
  return {"chakra", SectionForm::kTable, chakra_knobs().describe(""), read_chakra};
}

}  // namespace safs
