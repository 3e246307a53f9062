// [chakra] through safs-sim as a user runs it: trace files the test writes
// run to completion with the expected ops and flows, and every broken trace
// or section exits 2 naming the file and the node, message or key, leaving
// an earlier run's outputs in place. Skipped in a build without protobuf.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/cli_run.h"
#include "workload/chakra/chakra_file.h"
#include "workload/chakra/gpipe_trace.h"

namespace {

namespace fs = std::filesystem;
using namespace safs;
using safs::testing::contains;
using safs::testing::process_temp_dir;
using safs::testing::read_text;
using safs::testing::run_cli;
using safs::testing::write_temp;

class ChakraCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!chakra_supported()) GTEST_SKIP() << "built without protobuf: no Chakra support";
  }

  // Writes the ranks as PREFIX.r.et and a scenario running them.
  static fs::path scenario(const std::string& name, const std::vector<ChakraRank>& ranks,
                           const std::string& extra = "", int hosts = 4) {
    const fs::path prefix = process_temp_dir() / name;
    for (std::size_t r = 0; r < ranks.size(); ++r) {
      write_chakra_rank(ranks[r], prefix.string() + "." + std::to_string(r) + ".et");
    }
    return write_temp(name + ".toml", "[topology]\nhosts = " + std::to_string(hosts) +
                                          "\n[chakra]\ntrace = \"" + name + "\"\n" + extra);
  }

  static void expect_refused(const fs::path& toml, const std::string& message) {
    const auto r = run_cli("validate " + toml.string());
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, message)) << r.output << "\nexpected: " << message;
  }
};

std::vector<ChakraRank> small_gpipe() {
  return gpipe_trace({.stages = 2,
                      .microbatches = 2,
                      .forward_us = 10,
                      .backward_us = 20,
                      .activation_bytes = 100000,
                      .allreduce_bytes = 40000});
}

std::vector<std::string> lines_of(const fs::path& path) {
  std::istringstream in(read_text(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_F(ChakraCli, GpipeTraceRunsWithEveryTransport) {
  const fs::path toml = scenario("chakra-run", small_gpipe(), "hosts = [2, 0]\n");
  for (const char* transport : {"dctcp", "safs"}) {
    const fs::path out = process_temp_dir() / (std::string("chakra-run-") + transport);
    const auto r = run_cli("run " + toml.string() + " --quiet --transport " + transport +
                           " --out " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    // 4 sends and a 2-rank ring all-reduce: 2 steps x 2 ranks.
    const std::vector<std::string> flows = lines_of(out / "flows.csv");
    ASSERT_EQ(flows.size(), 1u + 4 + 4) << transport;
    EXPECT_TRUE(contains(flows[1], ",2,0,100000,")) << flows[1];  // rank 0 on host 2
    EXPECT_TRUE(contains(flows[5], ",20000,")) << flows[5];       // half the all-reduce
    // 8 nodes a rank; the all-reduce's 2 steps take 3 ops.
    EXPECT_EQ(lines_of(out / "ops.csv").size(), 1u + 2 * (8 + 3));
    const auto summary = nlohmann::json::parse(read_text(out / "summary.json"));
    EXPECT_TRUE(summary["compute"]["finished"].get<bool>());
    EXPECT_DOUBLE_EQ(summary["compute"]["planned_iteration_time_s"].get<double>(), 90e-6);
  }
}

TEST_F(ChakraCli, BrokenTracesNameTheFileAndTheNode) {
  std::vector<ChakraRank> ranks = small_gpipe();
  ranks[1].nodes[1].data_deps = {77};
  expect_refused(scenario("chakra-dep", ranks),
                 "chakra-dep.1.et (rank 1): node 2 'forward mb0' depends on node 77, which is "
                 "not in the file");
  ranks = small_gpipe();
  ranks[0].nodes[0].ctrl_deps = {ranks[0].nodes.back().id - 1};  // the last backward
  expect_refused(scenario("chakra-cycle", ranks),
                 "chakra-cycle.0.et (rank 0): node 1 'forward "
                 "mb0' is on a dependency cycle (1 -> ");
  ranks = small_gpipe();
  ranks[1].nodes.erase(ranks[1].nodes.begin());  // rank 1's first recv
  ranks[1].nodes[0].data_deps.clear();
  expect_refused(scenario("chakra-lonely", ranks),
                 "chakra-lonely.0.et (rank 0): node 2 'send_act mb0' sends to rank 1 with tag 0, "
                 "and that rank has no recv left for it");
  // Every message says where it is and which key brought the file in.
  expect_refused(scenario("chakra-lonely", ranks), "chakra.trace");
}

TEST_F(ChakraCli, BrokenFilesNameTheMessage) {
  const fs::path toml = scenario("chakra-cut", small_gpipe());
  const std::string rank1 = (process_temp_dir() / "chakra-cut.1.et").string();
  const std::string whole = read_text(rank1);
  std::ofstream(rank1, std::ios::binary | std::ios::trunc) << whole.substr(0, whole.size() - 3);
  expect_refused(toml, "chakra-cut.1.et: message 9 (byte ");
  expect_refused(toml, "(truncated)");
  std::ofstream(rank1, std::ios::binary | std::ios::trunc) << whole << "\xff\xff\xff\xff\xff\xff";
  expect_refused(toml, "chakra-cut.1.et: message 10 (byte " + std::to_string(whole.size()) +
                           "): its size prefix is longer than 5 bytes (not a Chakra trace)");
  std::ofstream(rank1, std::ios::binary | std::ios::trunc) << whole << "\x02\xff\xff";
  expect_refused(toml, "chakra-cut.1.et: message 10 (byte " + std::to_string(whole.size()) +
                           "): not a Chakra Node message");
  fs::remove(rank1);
  const fs::path two = write_temp(
      "chakra-two.toml", "[topology]\nhosts = 4\n[chakra]\ntrace = \"" +
                             (process_temp_dir() / "chakra-cut").string() + "\"\nranks = 2\n");
  expect_refused(two, "chakra.ranks: " + rank1 + ": no such file (rank 1's trace)");
  // ranks = 0 counts the files there are: rank 0 alone is a trace without partners.
  expect_refused(toml,
                 "chakra-cut.0.et (rank 0): node 2 'send_act mb0' has comm_dst 1, outside "
                 "the trace's ranks 0..0");
  expect_refused(
      write_temp("chakra-none.toml", "[topology]\nhosts = 4\n[chakra]\ntrace = \"nope\"\n"),
      "chakra.trace: nope.0.et: no such file (rank 0's trace)");
}

// Fields of the full schema that the subset leaves out (a node's IOInfo, an
// attribute's list value) are skipped: the bytes below are what a writer
// with the whole et_def.proto would produce.
TEST_F(ChakraCli, SkipsFieldsBeyondTheSubset) {
  const std::string node =
      "\x08\x01"                               // id 1
      "\x18\x04"                               // type COMP_NODE
      "\x38\x05"                               // duration_micros 5
      "\x42\x03\x0a\x01x"                      // inputs: IOInfo{values "x"}
      "\x52\x0c\x0a\x01y"                      // attr: name "y",
      "\x52\x07\x0a\x05\x01\x02\x03\x04\x05";  // int64_list {1, 2, 3, 4, 5}
  ASSERT_EQ(node.size(), 25u);
  const std::string file = std::string("\x00", 1) + static_cast<char>(node.size()) + node;
  const fs::path path = process_temp_dir() / "chakra-full.0.et";
  std::ofstream(path, std::ios::binary | std::ios::trunc) << file;
  const ChakraRank rank = load_chakra_rank(path.string());
  ASSERT_EQ(rank.nodes.size(), 1u);
  EXPECT_EQ(rank.nodes[0].id, 1u);
  EXPECT_EQ(rank.nodes[0].type, static_cast<int>(ChakraNodeType::kCompute));
  EXPECT_EQ(rank.nodes[0].duration_micros, 5u);
}

TEST_F(ChakraCli, HostsMustFitTheTopology) {
  expect_refused(scenario("chakra-hosts", small_gpipe(), "hosts = [1]\n"),
                 "chakra.hosts: gives 1 hosts for 2 ranks");
  expect_refused(scenario("chakra-hosts", small_gpipe(), "hosts = [1, 1]\n"),
                 "host 1 is given to ranks 0 and 1");
  expect_refused(scenario("chakra-hosts", small_gpipe(), "hosts = [0, 3]\n", 2),
                 "chakra.hosts: rank 1 needs host 3; the topology has 2 hosts");
}

TEST_F(ChakraCli, ABrokenTraceLeavesEarlierOutputsAlone) {
  const fs::path out = process_temp_dir() / "chakra-kept";
  fs::create_directories(out);
  std::ofstream(out / "flows.csv") << "earlier\n";
  std::vector<ChakraRank> ranks = small_gpipe();
  ranks[0].nodes[0].data_deps = {99};
  const auto r =
      run_cli("run " + scenario("chakra-kept", ranks).string() + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_EQ(read_text(out / "flows.csv"), "earlier\n");
}

// The example's trace files are what the generator writes today.
TEST_F(ChakraCli, ExampleTraceIsTheGeneratorsOutput) {
  GpipeTraceOptions o;
  o.stages = 4;
  o.microbatches = 8;
  o.allreduce_bytes = 16 << 20;
  const std::vector<ChakraRank> ranks = gpipe_trace(o);
  const fs::path dir = fs::path(SAFS_SOURCE_DIR) / "scenarios/examples/chakra";
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const fs::path fresh = process_temp_dir() / ("chakra-example." + std::to_string(r) + ".et");
    write_chakra_rank(ranks[r], fresh.string());
    // Not EXPECT_EQ: its message would print the binary files.
    EXPECT_TRUE(read_text(fresh) == read_text(dir / ("gpipe." + std::to_string(r) + ".et")))
        << "scenarios/examples/chakra/gpipe." << r
        << ".et differs from the generator's output; rerun the command in "
           "scenarios/examples/chakra-gpipe.toml";
  }
  const auto run = run_cli(
      "validate " + (fs::path(SAFS_SOURCE_DIR) / "scenarios/examples/chakra-gpipe.toml").string());
  EXPECT_EQ(run.exit_code, 0) << run.output;
}

}  // namespace
