// [graph]: a compute graph written op by op. The parser builds the graph as
// written (orders, transfer ends and sizes); a run starts each op when its
// GPU and its inputs are ready and carries each transfer as one urgent flow
// with its consumer's no-bubble timestamp; bad input exits 2 naming the
// file, line and key.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "scenario/scenario.h"
#include "support/cli_run.h"
#include "workload/compute/compute_graph.h"

namespace {

namespace fs = std::filesystem;
using namespace safs;
using safs::testing::contains;
using safs::testing::read_text;
using safs::testing::run_cli;
using safs::testing::write_temp;

// GPU 0 computes F0 (100 us) and sends 1 MB to GPU 1's F1 (50 us); GPU 0
// goes on with W0 (20 us), which waits for nothing.
const char* const kChain =
    "[topology]\nhosts = 2\n"
    "[[graph.op]]\ngpu = 0\nduration_us = 100\nlabel = \"F0\"\n"
    "[[graph.op]]\ngpu = 1\nduration_us = 50\nlabel = \"F1\"\n"
    "[[graph.op]]\ngpu = 0\nduration_us = 20\n"
    "[[graph.transfer]]\nproducer = 0\nconsumer = 1\nsize_bytes = 1000000\n";

TEST(GraphKind, BuildsTheGraphAsWritten) {
  const ExperimentConfig c = parse_scenario(kChain, "chain.toml");
  const auto graphs = c.workloads.all<ComputeGraph>();
  ASSERT_EQ(graphs.size(), 1u);
  const ComputeGraph& g = *graphs[0];
  ASSERT_EQ(g.ops.size(), 3u);
  EXPECT_EQ(g.ops[0].label, "F0");
  EXPECT_EQ(g.ops[1].duration_ps, 50 * kPsPerUs);
  EXPECT_EQ(g.ops[2].label, "op 2");  // the default label names its index
  ASSERT_EQ(g.gpu_order.size(), 2u);
  EXPECT_EQ(g.gpu_order[0], (std::vector<int>{0, 2}));
  EXPECT_EQ(g.gpu_order[1], (std::vector<int>{1}));
  ASSERT_EQ(g.transfers.size(), 1u);
  EXPECT_EQ(g.transfers[0].src, 0);
  EXPECT_EQ(g.transfers[0].dst, 1);
  EXPECT_EQ(g.transfers[0].size_bytes, 1'000'000u);
  EXPECT_EQ(g.ops[1].inputs, (std::vector<int>{0}));
  EXPECT_EQ(planned_starts(g), (std::vector<TimePs>{0, 100 * kPsPerUs, 100 * kPsPerUs}));
}

TEST(GraphKind, ATransferWithoutAProducerLeavesItsSrcAtTheStart) {
  const ExperimentConfig c = parse_scenario(
      "[topology]\nhosts = 3\n[[graph.op]]\ngpu = 0\nduration_us = 10\n"
      "[[graph.transfer]]\nproducer = -1\nsrc = 2\nconsumer = 0\nsize_bytes = 4096\n",
      "input.toml");
  const ComputeGraph& g = *c.workloads.all<ComputeGraph>().at(0);
  ASSERT_EQ(g.transfers.size(), 1u);
  EXPECT_EQ(g.transfers[0].producer, -1);
  EXPECT_EQ(g.transfers[0].src, 2);
  EXPECT_EQ(g.transfers[0].dst, 0);
  EXPECT_NO_THROW(g.validate());
}

std::vector<std::vector<std::string>> rows_of(const fs::path& csv) {
  std::istringstream in(read_text(csv));
  std::vector<std::vector<std::string>> rows;
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> fields;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) fields.push_back(cell);
    rows.push_back(fields);
  }
  return rows;
}

TEST(GraphKind, RunStartsOpsWhenTheirInputsArrive) {
  const fs::path scenario = write_temp("safs-graph-chain.toml", kChain);
  const fs::path out = safs::testing::process_temp_dir() / "safs-graph-chain";
  fs::remove_all(out);
  const auto r = run_cli("run " + scenario.string() + " --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;

  // flows.csv: id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,deadline_s,...
  const auto flows = rows_of(out / "flows.csv");
  ASSERT_EQ(flows.size(), 2u);
  EXPECT_EQ(flows[1][1], "0");
  EXPECT_EQ(flows[1][2], "1");
  EXPECT_EQ(flows[1][3], "1000000");
  EXPECT_DOUBLE_EQ(std::stod(flows[1][4]), 100e-6);  // F0's end
  EXPECT_DOUBLE_EQ(std::stod(flows[1][9]), 100e-6);  // F1's no-bubble start
  EXPECT_EQ(flows[1][11], "urgent");
  const double arrival_s = std::stod(flows[1][5]);
  EXPECT_GT(arrival_s, 100e-6 + 1e6 * 8 / 100e9);  // at least its serialisation at 100 Gbit/s

  // ops.csv: op,label,gpu,duration_s,planned_start_s,start_s,end_s,wait_s
  const auto ops = rows_of(out / "ops.csv");
  ASSERT_EQ(ops.size(), 4u);
  EXPECT_EQ(ops[1][1], "F0");
  EXPECT_DOUBLE_EQ(std::stod(ops[1][5]), 0);
  EXPECT_EQ(ops[2][1], "F1");
  EXPECT_EQ(ops[2][2], "1");
  EXPECT_DOUBLE_EQ(std::stod(ops[2][4]), 100e-6);
  EXPECT_DOUBLE_EQ(std::stod(ops[2][5]), arrival_s);  // starts when its input arrives
  EXPECT_DOUBLE_EQ(std::stod(ops[3][5]), 100e-6);     // W0 waits only for F0
  EXPECT_DOUBLE_EQ(std::stod(ops[3][7]), 0);
}

struct BadGraph {
  std::string name;
  std::string text;  // after [topology] hosts = 2
  std::string message;
};

class GraphKindBadInput : public ::testing::TestWithParam<BadGraph> {};

TEST_P(GraphKindBadInput, ExitsTwoNamingFileLineAndKey) {
  const BadGraph& c = GetParam();
  const fs::path scenario =
      write_temp("safs-graph-bad-" + c.name + ".toml", "[topology]\nhosts = 2\n" + c.text);
  const auto r = run_cli("validate " + scenario.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, scenario.string() + ":" + c.message)) << r.output;
}

const std::string kOp0 = "[[graph.op]]\ngpu = 0\nduration_us = 1\n";  // lines 3-5
const std::string kOp1 = "[[graph.op]]\ngpu = 1\nduration_us = 1\n";

INSTANTIATE_TEST_SUITE_P(
    Cases, GraphKindBadInput,
    ::testing::Values(
        BadGraph{"no_op", "[graph]\n", "3: graph: needs at least one [[graph.op]]"},
        // Each in range, together past int64 picoseconds (planned times wrapped).
        BadGraph{"durations_past_time",
                 "[[graph.op]]\ngpu = 0\nduration_us = 1e12\n"
                 "[[graph.op]]\ngpu = 0\nduration_us = 1e12\n"
                 "[[graph.op]]\ngpu = 0\nduration_us = 1e12\n",
                 "3: graph: the ops' durations add up to 3000000.000000 s, past what simulated "
                 "time holds"},
        BadGraph{"gpu", "[[graph.op]]\ngpu = 2\nduration_us = 1\n",
                 "4: graph.op[0].gpu: host 2 is out of range (the topology has 2 hosts, 0..1)"},
        BadGraph{"consumer",
                 kOp0 + kOp1 + "[[graph.transfer]]\nproducer = 0\nconsumer = 12\nsize_bytes = 8\n",
                 "11: graph.transfer[0].consumer: op 12 does not exist (2 ops)"},
        BadGraph{"producer",
                 kOp0 + kOp1 + "[[graph.transfer]]\nproducer = 2\nconsumer = 1\nsize_bytes = 8\n",
                 "10: graph.transfer[0].producer: op 2 does not exist (2 ops)"},
        BadGraph{"one_gpu",
                 kOp0 + kOp0 + "[[graph.transfer]]\nproducer = 0\nconsumer = 1\nsize_bytes = 8\n",
                 "11: graph.transfer[0].consumer: op 1 runs on gpu 0 like its producer op 0; a "
                 "transfer must cross GPUs"},
        BadGraph{"with_pipeline", "[pipeline]\nstages = 2\nmicrobatches = 2\n" + kOp0,
                 "6: graph: runs on host 0, which already runs an earlier job (the one whose "
                 "outputs are ops.csv); each GPU host runs one job"},
        BadGraph{"initial_without_src",
                 kOp0 + "[[graph.transfer]]\nproducer = -1\nconsumer = 0\nsize_bytes = 8\n",
                 "7: graph.transfer[0].src: a transfer without a producer (-1) needs a src host"},
        BadGraph{"src_with_producer",
                 kOp0 + kOp1 +
                     "[[graph.transfer]]\nproducer = 0\nconsumer = 1\nsize_bytes = 8\nsrc = 1\n",
                 "13: graph.transfer[0].src: src is for a transfer without a producer"},
        BadGraph{
            "src_out_of_range",
            kOp0 + "[[graph.transfer]]\nproducer = -1\nsrc = 3\nconsumer = 0\nsize_bytes = 8\n",
            "8: graph.transfer[0].src: host 3 is out of range"},
        BadGraph{"missing_size", kOp0 + kOp1 + "[[graph.transfer]]\nproducer = 0\nconsumer = 1\n",
                 "9: graph.transfer[0].size_bytes: missing (required)"},
        BadGraph{"typo", kOp0 + "lable = \"x\"\n",
                 "6: graph.op[0].lable: unknown key; did you mean 'graph.op[].label'?"},
        // ops.csv writes labels as they are.
        BadGraph{"label_with_a_comma", kOp0 + "label = \"a,b\"\n",
                 "6: graph.op[0].label: expected no commas, quotes or control characters"},
        BadGraph{"label_with_a_line_break", kOp0 + "label = \"a\\nb\"\n",
                 "6: graph.op[0].label: expected no commas, quotes or control characters"},
        // Each GPU's first op waits for the other GPU's second.
        BadGraph{"deadlock",
                 kOp0 + kOp1 + kOp0 + kOp1 +
                     "[[graph.transfer]]\nproducer = 2\nconsumer = 1\nsize_bytes = 8\n"
                     "[[graph.transfer]]\nproducer = 3\nconsumer = 0\nsize_bytes = 8\n",
                 "3: graph: the per-GPU orders deadlock: gpu 0 waits at op 0 for transfer 1 from "
                 "op 3; gpu 1 waits at op 1 for transfer 0 from op 2"}),
    [](const auto& test) { return test.param.name; });

}  // namespace
