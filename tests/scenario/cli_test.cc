// safs-sim as a user meets it: exit codes and the files it writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;

using Result = safs::testing::CliResult;
using safs::testing::contains;
using safs::testing::read_text;
using safs::testing::run_cli;
using safs::testing::write_temp;

const char* const kSmall = safs::testing::kSmallScenario;

TEST(Cli, RunWritesSummaryAndFlows) {
  const fs::path scenario = write_temp("safs-cli-small.toml", kSmall);
  const fs::path out = safs::testing::process_temp_dir() / "safs-cli-out";
  fs::remove_all(out);
  const Result r = run_cli("run " + scenario.string() + " --seed 5 --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(out / "summary.json"));
  std::ifstream csv(out / "flows.csv");
  std::string header, row;
  std::getline(csv, header);
  std::getline(csv, row);
  EXPECT_EQ(header,
            "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,deadline_s,"
            "met_deadline,class,delivered_bytes,data_packets,control_packets");
  EXPECT_EQ(row.rfind("0,1,0,100000,0.000000000,", 0), 0u) << row;
  std::ifstream summary(out / "summary.json");
  std::ostringstream text;
  text << summary.rdbuf();
  EXPECT_NE(text.str().find("\"seed\": 5"), std::string::npos);
  EXPECT_NE(text.str().find("\"completed\": 1"), std::string::npos);
}

TEST(Cli, BadScenarioExitsTwoWithLocation) {
  const fs::path scenario = write_temp("safs-cli-bad.toml", "[topology]\nhosts = -3\n");
  const Result r = run_cli("validate " + scenario.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("safs-cli-bad.toml:2: topology.hosts"), std::string::npos) << r.output;
}

// Two inputs that once escaped as exit 1 with a library message.
TEST(Cli, HugeIntegerForANumberKeyExitsTwoWithLocation) {
  const fs::path scenario =
      write_temp("safs-cli-huge.toml", "[simulation]\nstop_ms = 9007199254740993\n");
  const Result r = run_cli("validate " + scenario.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("safs-cli-huge.toml:2: simulation.stop_ms: expected number"),
            std::string::npos)
      << r.output;
}

TEST(Cli, OverlongCdfPathExitsTwoWithLocation) {
  const fs::path scenario =
      write_temp("safs-cli-longcdf.toml", "[[poisson]]\nload = 0.5\nmax_flows = 1\ncdf = \"" +
                                              std::string(5000, 'x') + "\"\n");
  const Result r = run_cli("validate " + scenario.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_NE(r.output.find("safs-cli-longcdf.toml:4: poisson[0].cdf: "), std::string::npos)
      << r.output.substr(0, 200);
}

TEST(Cli, MissingFileExitsTwo) {
  const Result r = run_cli("run /nonexistent/scenario.toml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("cannot open"), std::string::npos) << r.output;
}

TEST(Cli, UnknownOptionExitsTwo) { EXPECT_EQ(run_cli("run --no-such-flag x.toml").exit_code, 2); }

TEST(Cli, ValidateAcceptsAGoodFile) {
  const fs::path scenario = write_temp("safs-cli-good.toml", kSmall);
  const Result r = run_cli("validate " + scenario.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("ok (3 hosts; 1 listed flows;"), std::string::npos) << r.output;
}

TEST(Cli, UnknownSetKeySuggestsTheClosest) {
  const fs::path scenario = write_temp("safs-cli-set.toml", kSmall);
  const Result r = run_cli("validate " + scenario.string() + " --set topolgy.link_gbps=10");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "did you mean 'topology.link_gbps'")) << r.output;
}

TEST(Cli, UnknownTransportSuggestsTheClosest) {
  const fs::path scenario = write_temp("safs-cli-transport.toml", kSmall);
  const Result r = run_cli("validate " + scenario.string() + " --set transport.name=dctpc");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "did you mean 'dctcp'")) << r.output;
}

TEST(Cli, UnknownOptionSuggestsTheClosest) {
  const Result r = run_cli("run --tranport dctcp x.toml");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "did you mean '--transport'")) << r.output;
  EXPECT_TRUE(contains(run_cli("rnu x.toml").output, "did you mean 'run'"));
}

// Observers (queue sampling here; the progress bar uses the same kind of hook)
// watch from the run loop and must not change a single byte of the results.
TEST(Cli, QueueSamplingLeavesResultsIdentical) {
  // Two senders into host 0, so that its port queues (one flow at line rate
  // does not).
  const std::string two_senders =
      std::string(kSmall) + "[[flows]]\nsrc = 2\ndst = 0\nsize_bytes = 100000\n";
  const fs::path scenario = write_temp("safs-cli-queues.toml", two_senders);
  const fs::path plain = safs::testing::process_temp_dir() / "safs-cli-plain";
  const fs::path sampled = safs::testing::process_temp_dir() / "safs-cli-sampled";
  fs::remove_all(plain);
  fs::remove_all(sampled);
  ASSERT_EQ(run_cli("run " + scenario.string() + " --quiet --out " + plain.string()).exit_code, 0);
  const Result r = run_cli("run " + scenario.string() + " --verbose --queue-sample-us 1 --out " +
                           sampled.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(plain / "flows.csv"), read_text(sampled / "flows.csv"));
  const std::string queues = read_text(sampled / "queues.csv");
  EXPECT_EQ(queues.rfind("time_s,port,queue_bytes\n", 0), 0u);
  EXPECT_TRUE(contains(queues, "switch->host0")) << queues.substr(0, 200);
  EXPECT_TRUE(contains(r.output, "transport dctcp, seed 1")) << r.output;  // --verbose
}

TEST(Cli, QuietRunPrintsNothing) {
  const fs::path scenario = write_temp("safs-cli-quiet.toml", kSmall);
  const fs::path out = safs::testing::process_temp_dir() / "safs-cli-quiet";
  fs::remove_all(out);
  const Result r = run_cli("run " + scenario.string() + " --quiet --out " + out.string());
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "");
}

// One 4 MiB transfer between two GPUs, announced when its producer starts:
// due as the 100 us producer ends, though it takes 335 us at 100 Gbit/s.
const char* kAnnounced =
    "[topology]\nhosts = 2\n[transport]\nname = \"safs\"\n"
    "[[graph.op]]\ngpu = 0\nduration_us = 100\n[[graph.op]]\ngpu = 1\nduration_us = 100\n"
    "[[graph.transfer]]\nproducer = 0\nconsumer = 1\nsize_bytes = 4194304\n";

// What became of the announcements is in summary.json only when SAFS
// announces: runs without it keep their outputs.
TEST(Cli, AnnouncementCountsAreReportedOnlyWhenTransfersAreAnnounced) {
  const fs::path scenario = write_temp("safs-cli-announced.toml", kAnnounced);
  const fs::path on = safs::testing::process_temp_dir() / "safs-cli-announced-on";
  const fs::path off = safs::testing::process_temp_dir() / "safs-cli-announced-off";
  ASSERT_EQ(run_cli("run " + scenario.string() + " --quiet --out " + on.string() +
                    " --set transport.safs.announce_ahead=true")
                .exit_code,
            0);
  ASSERT_EQ(run_cli("run " + scenario.string() + " --quiet --out " + off.string()).exit_code, 0);
  const std::string with = read_text(on / "summary.json");
  EXPECT_TRUE(contains(with, "\"announcements\": 1,")) << with;
  EXPECT_TRUE(contains(with, "\"flows_on_plans\": 1")) << with;
  EXPECT_TRUE(contains(with, "\"announcements_infeasible\": 1,")) << with;
  EXPECT_FALSE(contains(read_text(off / "summary.json"), "announcements"));
}

const char* kSweep =
    "[topology]\nhosts = 3\n[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = 100000\n"
    "[sweep]\ngrid = [\"transport.name=dctcp,reno\"]\n"
    "metrics = [\"flows.fct_mean_s\", \"transport_stats.data_packets\"]\n";

TEST(Cli, SweepRunsEveryPointAndResumes) {
  const fs::path scenario = write_temp("safs-cli-sweep.toml", kSweep);
  const fs::path out = safs::testing::process_temp_dir() / "safs-cli-sweep";
  fs::remove_all(out);
  const std::string command = "sweep " + scenario.string() +
                              " --grid topology.link_delay_us=1,2 -j 2 --out " + out.string();
  Result r = run_cli(command);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "4 points (4 run, 0 done before, 0 failed)")) << r.output;
  for (const char* point : {"transport=dctcp,link_delay_us=1", "transport=dctcp,link_delay_us=2",
                            "transport=reno,link_delay_us=1", "transport=reno,link_delay_us=2"}) {
    EXPECT_TRUE(fs::exists(out / point / "summary.json")) << point;
    EXPECT_TRUE(fs::exists(out / point / "flows.csv")) << point;
  }
  const std::string csv = read_text(out / "sweep.csv");
  EXPECT_EQ(csv.rfind("point,transport.name,topology.link_delay_us,flows.fct_mean_s,"
                      "transport_stats.data_packets\n\"transport=dctcp,link_delay_us=1\",dctcp,1,",
                      0),
            0u)
      << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);

  // Finished points are skipped; a point without summary.json is run again.
  fs::remove(out / "transport=reno,link_delay_us=2" / "summary.json");
  r = run_cli(command);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "4 points (1 run, 3 done before, 0 failed)")) << r.output;
  EXPECT_EQ(read_text(out / "sweep.csv"), csv);  // deterministic
}

// An array job: each task runs one shard into a shared --out; --collect then
// writes the CSV one sweep would have written, byte for byte.
TEST(Cli, SweepShardsCollectToTheCsvOfOneSweep) {
  const fs::path scenario = write_temp("safs-cli-shards.toml", kSweep);
  const fs::path whole = safs::testing::process_temp_dir() / "safs-cli-shards-whole";
  const fs::path parts = safs::testing::process_temp_dir() / "safs-cli-shards-parts";
  fs::remove_all(whole);
  fs::remove_all(parts);
  const std::string grid = " --grid topology.link_delay_us=1,2,3 --quiet";
  ASSERT_EQ(run_cli("sweep " + scenario.string() + grid + " --out " + whole.string()).exit_code, 0);
  const std::string sweep = "sweep " + scenario.string() + grid + " --out " + parts.string();
  for (const char* shard : {"0/4", "1/4", "2/4"}) {
    const Result r = run_cli(sweep + " --shard " + shard);
    ASSERT_EQ(r.exit_code, 0) << shard << ": " << r.output;
  }
  EXPECT_FALSE(fs::exists(parts / "sweep.csv"));  // shards write no CSV
  // Shard 3/4 has not run: its points are named and nothing is written.
  Result r = run_cli(sweep + " --collect");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "1 of 6 points have not finished")) << r.output;
  EXPECT_TRUE(contains(r.output, "transport=reno,link_delay_us=1")) << r.output;
  EXPECT_FALSE(fs::exists(parts / "sweep.csv"));
  ASSERT_EQ(run_cli(sweep + " --shard 3/4").exit_code, 0);
  r = run_cli(sweep + " --collect");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(read_text(parts / "sweep.csv"), read_text(whole / "sweep.csv"));

  for (const char* bad : {"4/4", "1/0", "x/2", "/2", "1/", "1/2/3", "-1/2"}) {
    r = run_cli(sweep + " --shard " + bad);
    EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.output;
    EXPECT_TRUE(contains(r.output, std::string("--shard ") + bad + ": expected I/N")) << r.output;
  }
  EXPECT_EQ(run_cli(sweep + " --shard 0/2 --collect").exit_code, 2);
}

TEST(Cli, SweepRejectsAnUnknownGridKeyBeforeRunning) {
  const fs::path scenario = write_temp("safs-cli-sweep-bad.toml", kSmall);
  const fs::path out = safs::testing::process_temp_dir() / "safs-cli-sweep-bad";
  fs::remove_all(out);
  const Result r = run_cli("sweep " + scenario.string() + " --grid topology.link_delay=1,2 --out " +
                           out.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "did you mean 'topology.link_delay_us'")) << r.output;
  EXPECT_FALSE(fs::exists(out));
}

TEST(Cli, CompareShowsRatiosToABaselineTransport) {
  const fs::path scenario = write_temp("safs-cli-compare.toml", kSweep);
  const fs::path out = safs::testing::process_temp_dir() / "safs-cli-compare";
  fs::remove_all(out);
  ASSERT_EQ(run_cli("sweep " + scenario.string() + " --quiet --out " + out.string()).exit_code, 0);
  const Result r =
      run_cli("compare " + out.string() + " --baseline dctcp --metric flows.fct_mean_s:fct:1000");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "| dctcp | ")) << r.output;
  EXPECT_TRUE(contains(r.output, "(1.00x) |")) << r.output;
  EXPECT_EQ(run_cli("compare " + out.string() + " --baseline dctpc").exit_code, 2);
}

}  // namespace

namespace {

// On a terminal (a pseudo-terminal from script(1) here) the bar counts what
// ends the run: the listed flows, not simulated time against stop_ms.
TEST(Cli, ProgressCountsTheFlowsThatEndTheRun) {
  if (!fs::exists("/usr/bin/script")) GTEST_SKIP() << "needs script(1) for a terminal";
  const fs::path scenario = write_temp("safs-cli-progress.toml", kSmall);
  const fs::path out = safs::testing::process_temp_dir() / "safs-cli-progress";
  const fs::path log = safs::testing::process_temp_dir() / "safs-cli-progress.log";
  fs::remove_all(out);
  const std::string command = "/usr/bin/script -qec '" + std::string(SAFS_SIM_PATH) + " run " +
                              scenario.string() + " --set flows[0].size_bytes=300000000 --out " +
                              out.string() + "' /dev/null >" + log.string() + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << read_text(log);
  const std::string text = read_text(log);
  EXPECT_TRUE(contains(text, "0 of 1 flows, ")) << text;
  EXPECT_FALSE(contains(text, "ms simulated, ETA <=")) << text;
}

}  // namespace
