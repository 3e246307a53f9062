// htsim connection matrices: the parser refuses what htsim refuses (and what
// safs-sim does not model) naming the file and line; a run starts timed
// flows on time and triggered ones when their trigger fires.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/cli_run.h"
#include "workload/htsim/connection_matrix_file.h"

namespace {

namespace fs = std::filesystem;
using namespace safs;
using safs::testing::contains;
using safs::testing::read_text;
using safs::testing::run_cli;
using safs::testing::write_temp;

ConnectionMatrixFile parse(const std::string& text) {
  std::istringstream in(text);
  return parse_connection_matrix(in, "m.cm");
}

std::string error_of(const std::string& text) {
  try {
    parse(text);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConnectionMatrixFile, ReadsConnectionsAndTriggers) {
  const ConnectionMatrixFile f = parse(
      "# a comment\nNodes 4\nConnections 3\nTriggers 1\n"
      "1->0 id 1 start 2.5 size 1000 send_done_trigger 7\n"
      "2->0 id 2 trigger 7 size 2000 prio 3\n"
      "3->0 id 3 start 0 size 10 recv_done_trigger 7\n"
      "trigger id 7 barrier count 2\n");
  EXPECT_EQ(f.nodes, 4);
  ASSERT_EQ(f.connections.size(), 3u);
  EXPECT_EQ(f.connections[0].start_ps, 2'500'000);  // microseconds, as htsim reads them
  EXPECT_EQ(f.connections[0].send_done, 7u);
  EXPECT_EQ(f.connections[1].trigger, 7u);
  EXPECT_EQ(f.connections[1].start_ps, kTimeNever);
  EXPECT_EQ(f.connections[2].recv_done, 7u);
  EXPECT_EQ(f.connections[2].line, 7);
  ASSERT_EQ(f.triggers.size(), 1u);
  EXPECT_EQ(f.triggers[0].kind, CmTriggerKind::kBarrier);
  EXPECT_EQ(f.triggers[0].count, 2u);
}

TEST(ConnectionMatrixFile, RefusesWithTheLine) {
  const std::string nodes = "Nodes 4\n";
  EXPECT_EQ(error_of(nodes + "1->0 start 0 size 5 speed 3\n"),
            "m.cm:2: unknown token 'speed' (expected start, size, id, trigger, send_done_trigger, "
            "recv_done_trigger or prio)");
  EXPECT_TRUE(contains(error_of(nodes + "1->0 start 0 size 0\n"), "m.cm:2: needs a size"));
  EXPECT_TRUE(contains(error_of(nodes + "1->0 start 0\n"), "m.cm:2: needs a size"));
  EXPECT_TRUE(contains(error_of(nodes + "1->1 start 0 size 5\n"),
                       "m.cm:2: a connection from host 1 to itself"));
  EXPECT_TRUE(contains(error_of(nodes + "1->0 size 5\n"), "neither a start time nor a trigger"));
  EXPECT_TRUE(contains(error_of(nodes + "1->0 start 1 trigger 2 size 5\ntrigger id 2 oneshot\n"),
                       "m.cm:2: has both a start time and a trigger"));
  EXPECT_TRUE(
      contains(error_of(nodes + "1->9 start 0 size 5\n"), "m.cm:2: host 9 is beyond Nodes 4"));
  EXPECT_TRUE(contains(error_of(nodes + "1->0 trigger 3 size 5\n"),
                       "m.cm:2: trigger 3 is referenced but not defined"));
  EXPECT_TRUE(contains(error_of(nodes + "1->0 start x size 5\n"), "m.cm:2: start: 'x'"));
  EXPECT_TRUE(contains(error_of(nodes + "1->0 start 0 size\n"), "m.cm:2: 'size' needs a value"));
  EXPECT_TRUE(contains(error_of(nodes + "trigger id 1\n"), "m.cm:2: trigger 1 has no type"));
  EXPECT_TRUE(contains(error_of(nodes + "trigger id 1 barrier\n"), "needs a count of at least 1"));
  EXPECT_TRUE(contains(error_of(nodes + "trigger id 1 oneshot\ntrigger id 1 oneshot\n"),
                       "trigger 1 is defined twice"));
  EXPECT_TRUE(contains(error_of(nodes + "failure switch_type TOR\n"), "m.cm:2: link failures"));
  EXPECT_TRUE(contains(error_of(nodes + "Connections 2\n1->0 start 0 size 5\n"),
                       "Connections 2 declared, 1 given"));
  EXPECT_TRUE(contains(error_of("1->0 start 0 size 5\n"), "no 'Nodes N' line"));
  EXPECT_TRUE(contains(error_of(nodes + "hello\n"), "m.cm:2: unknown line starting 'hello'"));
}

struct FlowRow {
  int src, dst;
  double start_s, finish_s;
};

std::vector<FlowRow> flows_of(const fs::path& csv) {
  std::istringstream in(read_text(csv));
  std::string line;
  std::getline(in, line);  // header: id,src,dst,size_bytes,start_s,finish_s,...
  std::vector<FlowRow> rows;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string id, src, dst, size, start, finish;
    std::getline(fields, id, ',');
    std::getline(fields, src, ',');
    std::getline(fields, dst, ',');
    std::getline(fields, size, ',');
    std::getline(fields, start, ',');
    std::getline(fields, finish, ',');
    rows.push_back({std::stoi(src), std::stoi(dst), std::stod(start), std::stod(finish)});
  }
  return rows;
}

// A barrier on four flows starts two more; each of those activates a
// multishot trigger that starts one flow per activation.
TEST(ConnectionMatrixRun, TriggersStartFlowsWhenTheyFire) {
  const fs::path cm = write_temp("safs-cm-run.cm",
                                 "Nodes 8\nConnections 8\nTriggers 2\n"
                                 "1->0 start 0 size 1000000 send_done_trigger 1\n"
                                 "2->0 start 0 size 1000000 send_done_trigger 1\n"
                                 "3->0 start 0 size 1000000 recv_done_trigger 1\n"
                                 "4->0 start 10.5 size 1000000 recv_done_trigger 1\n"
                                 "0->5 trigger 1 size 500000 recv_done_trigger 2\n"
                                 "0->6 trigger 1 size 700000 recv_done_trigger 2\n"
                                 "7->0 trigger 2 size 100000\n"
                                 "7->1 trigger 2 size 100000\n"
                                 "trigger id 1 barrier count 4\ntrigger id 2 multishot\n");
  const fs::path scenario =
      write_temp("safs-cm-run.toml",
                 "[topology]\nhosts = 8\n[connection_matrix]\nfile = \"" + cm.string() + "\"\n");
  for (const char* transport : {"dctcp", "safs", "homa"}) {
    const fs::path out =
        safs::testing::process_temp_dir() / (std::string("safs-cm-run-") + transport);
    fs::remove_all(out);
    const auto r = run_cli("run " + scenario.string() + " --quiet --transport " + transport +
                           " --out " + out.string());
    ASSERT_EQ(r.exit_code, 0) << transport << ": " << r.output;
    const std::vector<FlowRow> rows = flows_of(out / "flows.csv");
    ASSERT_EQ(rows.size(), 8u) << transport;
    EXPECT_DOUBLE_EQ(rows[3].start_s, 10.5e-6);
    double last_of_four = 0;
    for (int i = 0; i < 4; ++i) last_of_four = std::max(last_of_four, rows[i].finish_s);
    // Ids 4 and 5: the barrier's flows, started when the fourth flow ended.
    EXPECT_DOUBLE_EQ(rows[4].start_s, last_of_four) << transport;
    EXPECT_DOUBLE_EQ(rows[5].start_s, last_of_four) << transport;
    // Ids 6 and 7: one per completion of the barrier's flows, in file order.
    const double first_done = std::min(rows[4].finish_s, rows[5].finish_s);
    const double second_done = std::max(rows[4].finish_s, rows[5].finish_s);
    EXPECT_DOUBLE_EQ(rows[6].start_s, first_done) << transport;
    EXPECT_EQ(rows[6].dst, 0);
    EXPECT_DOUBLE_EQ(rows[7].start_s, second_done) << transport;
    EXPECT_EQ(rows[7].dst, 1);
    const auto summary = nlohmann::json::parse(read_text(out / "summary.json"));
    EXPECT_EQ(summary["connection_matrix"]["completed"], 8);
    EXPECT_EQ(summary["connection_matrix"]["started_by_triggers"], 4);
  }
}

TEST(ConnectionMatrixRun, BadFilesAreBadInput) {
  const fs::path cm = write_temp("safs-cm-bad.cm", "Nodes 9\n1->0 start 0 size 5\n");
  const fs::path scenario =
      write_temp("safs-cm-bad.toml",
                 "[topology]\nhosts = 8\n[connection_matrix]\nfile = \"" + cm.string() + "\"\n");
  auto r = run_cli("validate " + scenario.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "connection_matrix.file: " + cm.string() +
                                     ": Nodes 9 is more than the topology's 8 hosts"))
      << r.output;
  const fs::path missing =
      write_temp("safs-cm-missing.toml",
                 "[topology]\nhosts = 8\n[connection_matrix]\nfile = \"nowhere.cm\"\n");
  r = run_cli("validate " + missing.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "cannot be read")) << r.output;
}

}  // namespace
