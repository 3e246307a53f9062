// Bad input on safs-sim's command line: each case exits 2 with a message
// naming the option or file and what was expected, and never blocks or
// prints a half result.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <utility>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;

using namespace safs::testing;  // run_cli and its helpers

const char* const kSmall = kSmallScenario;

void expect_bad_input(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, message)) << r.output;
}

TEST(CliBadInput, ScenarioThatIsNotARegularFile) {
  const std::string dir = fs::temp_directory_path().string();
  expect_bad_input(run_cli("run " + dir), dir + ": a directory; expected a scenario file");
  expect_bad_input(run_cli("validate /dev/null"), "/dev/null: a character device");
  const fs::path fifo = safs::testing::process_temp_dir() / "safs-bad-input.fifo";
  fs::remove(fifo);
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  // Opening a FIFO with no writer blocks; the check must not open it.
  expect_bad_input(run_cli("validate " + fifo.string()), ": a FIFO");
  expect_bad_input(run_cli("sweep " + fifo.string()), ": a FIFO");
}

TEST(CliBadInput, EmptyScenario) {
  const fs::path empty = write_temp("safs-bad-input-empty.toml", "\n  \n");
  expect_bad_input(run_cli("validate " + empty.string()), "empty; expected a scenario file");
  expect_bad_input(run_cli("run " + empty.string()), "empty; expected a scenario file");
}

TEST(CliBadInput, SeedOutOfRangeGivesTheRangeNotItsLimits) {
  const fs::path scenario = write_temp("safs-bad-input-seed.toml", kSmall);
  const CliResult r = run_cli("run " + scenario.string() + " --seed -1");
  expect_bad_input(r, "--seed: expected a number >= 0, got -1");
  EXPECT_LT(r.output.size(), 200u) << r.output;
}

TEST(CliBadInput, SweepGridKeyGivenTwice) {
  const fs::path scenario = write_temp("safs-bad-input-grid.toml", kSmall);
  expect_bad_input(run_cli("sweep " + scenario.string() +
                           " --grid topology.link_gbps=10 --grid topology.link_gbps=25"),
                   "--grid: key topology.link_gbps given twice");
}

TEST(CliBadInput, ValidateChecksTheSweepGrid) {
  const fs::path scenario =
      write_temp("safs-bad-input-sweep.toml",
                 std::string(kSmall) + "[sweep]\ngrid = [\"topology.link_gbps=10,-5\"]\n");
  expect_bad_input(run_cli("validate " + scenario.string()), "point link_gbps=-5");
}

TEST(CliBadInput, SweepMetricTypoNamesTheClosest) {
  const fs::path scenario = write_temp("safs-bad-input-metric.toml", kSmall);
  const fs::path out = safs::testing::process_temp_dir() / "safs-bad-input-metric";
  fs::remove_all(out);
  expect_bad_input(run_cli("sweep " + scenario.string() + " --quiet --metric flows.fct_mean_z " +
                           "--out " + out.string()),
                   "--metric flows.fct_mean_z: no value at that path in summary.json; did you "
                   "mean 'flows.fct_mean_s'?");
}

// A sweep writes over its --out's sweep.csv: one that is not a sweep's is
// the user's, and a file as --out is refused before any point runs.
TEST(CliBadInput, SweepOutThatIsNotASweeps) {
  const fs::path scenario = write_temp("safs-bad-input-sweep-out.toml", kSmall);
  const fs::path out = safs::testing::process_temp_dir() / "safs-bad-input-sweep-out";
  fs::remove_all(out);
  fs::create_directories(out);
  const fs::path csv = write_temp("safs-bad-input-sweep-out/sweep.csv", "name,grade\nada,1\n");
  ASSERT_EQ(csv.parent_path(), out);
  expect_bad_input(run_cli("sweep " + scenario.string() + " --quiet --out " + out.string()),
                   "sweep.csv there is not a sweep's");
  EXPECT_EQ(read_text(csv), "name,grade\nada,1\n");
  EXPECT_EQ(std::distance(fs::directory_iterator(out), fs::directory_iterator()), 1);
  expect_bad_input(run_cli("sweep " + scenario.string() + " --quiet --out " + csv.string()),
                   "exists and is not a directory");
}

// Values that wrapped or overflowed: a negative count taken as 2^64 - 2, a
// time beyond int64 picoseconds taken as some other time.
TEST(CliBadInput, NumbersBeyondWhatTheOptionHolds) {
  const fs::path scenario = write_temp("safs-bad-input-numbers.toml", kSmall);
  const std::string run = "run " + scenario.string() + " --out " +
                          (safs::testing::process_temp_dir() / "safs-bad-numbers").string();
  expect_bad_input(run_cli(run + " --trace-max-events -2"),
                   "--trace-max-events: expected a number > 0, got -2");
  expect_bad_input(run_cli(run + " --queue-sample-us 1e300"),
                   "--queue-sample-us: expected a number > 0 and <= 1e+12");
  expect_bad_input(run_cli(run + " --trace-from-ms 1e10"), "--trace-from-ms: expected a number");
  expect_bad_input(run_cli("fct /nonexistent --buckets -1"), "--buckets: expected a number > 0");
}

// A flow longer than int64 picoseconds hold at its bottleneck: its ideal FCT
// wrapped (7.7e6 s reported for 8e7) where it is now refused when the flow
// is registered, naming the flow and the workloads that can have made it.
TEST(CliBadInput, FlowLongerThanSimulatedTimeHolds) {
  const fs::path scenario = write_temp("safs-bad-input-long-flow.toml", kSmall);
  const CliResult result =
      run_cli("run " + scenario.string() + " --quiet --out " +
              (safs::testing::process_temp_dir() / "safs-long-flow").string() +
              " --set topology.link_gbps=0.001 --set flows[0].size_bytes=" + "10000000000000");
  expect_bad_input(result, "take longer than half of what simulated time holds");
  expect_bad_input(result, "flow 0 (host 1 to host 0, starting at 0.000000 s, from ");
}

// summary.json and flows.csv of the wrong shape are named, not a bare
// exception (exit 1): a JSON array, a size that is not a whole number.
TEST(CliBadInput, RunFilesOfTheWrongShape) {
  fs::create_directories(safs::testing::process_temp_dir() / "safs-bad-shape");
  fs::create_directories(safs::testing::process_temp_dir() / "safs-bad-shape-flows");
  const fs::path array = write_temp("safs-bad-shape/summary.json", "[]\n");
  expect_bad_input(run_cli("compare " + array.parent_path().string()),
                   "a JSON array; expected an object");
  const fs::path flows =
      write_temp("safs-bad-shape-flows/flows.csv",
                 "id,src,dst,size_bytes,start_s,finish_s,fct_s,ideal_fct_s,slowdown,x\n"
                 "1,0,1,-100,0,1,1,1,2.0,x\n");
  expect_bad_input(run_cli("fct " + flows.parent_path().string()),
                   "flows.csv:2: size_bytes '-100': expected a whole number of bytes");
}

TEST(CliBadInput, FctOfAMissingDirectoryPrintsNoTable) {
  const CliResult r = run_cli("fct /nonexistent-run-dir");
  expect_bad_input(r, "/nonexistent-run-dir/flows.csv: cannot open");
  EXPECT_FALSE(contains(r.output, "| run |")) << r.output;
}

TEST(CliBadInput, QuietWarningsNameTheirRun) {
  const fs::path scenario = write_temp("safs-bad-input-warn.toml",
                                       std::string(kSmall) + "[simulation]\nstop_ms = 0.001\n");
  const fs::path out = safs::testing::process_temp_dir() / "safs-bad-input-warn";
  fs::remove_all(out);
  const CliResult r = run_cli("run " + scenario.string() + " --quiet --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "warning: " + out.string() + ": 1 flows did not complete"))
      << r.output;
}

TEST(CliBadInput, AnOverrideDoesNotAddAWorkload) {
  const fs::path scenario = write_temp("safs-bad-input-stray.toml", kSmall);
  const CliResult r = run_cli("validate " + scenario.string() + " --set pipeline.stages=2");
  expect_bad_input(r, "--set pipeline.stages=2: the scenario has no [pipeline] section");
  // An override of a section the file has still works.
  EXPECT_EQ(run_cli("validate " + scenario.string() + " --set flows[0].size_bytes=5").exit_code, 0);
}

TEST(CliBadInput, TwoStagesOnOneHost) {
  const fs::path scenario =
      write_temp("safs-bad-input-stages.toml",
                 "[topology]\nhosts = 4\n[pipeline]\nstages = 4\nmicrobatches = 4\n"
                 "stage_hosts = [0, 1, 2, 2]\n");
  expect_bad_input(run_cli("validate " + scenario.string()),
                   "pipeline.stage_hosts: host 2 is given to stages 2 and 3");
}

// A training job and an AFD job share a run only on different hosts.
TEST(CliBadInput, PipelineOnTheInferenceHosts) {
  const std::string jobs =
      "[topology]\nhosts = 12\n[inference]\nattention_instances = 2\nffn_instances = 1\n"
      "prefill_hosts = 0\nbulk_hosts = 0\nlayers = 2\nwarmup_requests = 0\n"
      "measured_requests = 4\noutput_tokens_min = 2\noutput_tokens_max = 3\n"
      "[pipeline]\nstages = 2\nmicrobatches = 2\nforward_ms = 1\nbackward_ms = 1\n"
      "weight_ms = 1\nhidden = 256\n";
  const fs::path overlap = write_temp("safs-bad-input-jobs.toml", jobs + "stage_hosts = [2, 5]\n");
  expect_bad_input(run_cli("validate " + overlap.string()),
                   "inference: uses host 2, where a training job ([pipeline], outputs ops.csv) "
                   "runs; give each job hosts of its own (inference.hosts, "
                   "pipeline.stage_hosts)");
  const fs::path apart = write_temp("safs-jobs-apart.toml", jobs + "stage_hosts = [4, 5]\n");
  const fs::path out = safs::testing::process_temp_dir() / "safs-jobs-apart";
  fs::remove_all(out);
  const CliResult r = run_cli("run " + apart.string() + " --quiet --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string summary = read_text(out / "summary.json");
  EXPECT_TRUE(contains(summary, "\"inference\"")) << summary;
  EXPECT_TRUE(contains(summary, "\"iteration_time_s\"")) << summary;
}

// inference.hosts places the AFD job: on a star every host is alike, so the
// job decodes step for step as on hosts 0..2; a wrong list is named.
TEST(CliBadInput, InferenceHostsPlaceTheJob) {
  const std::string job =
      "[topology]\nhosts = 12\n[inference]\nattention_instances = 2\nffn_instances = 1\n"
      "prefill_hosts = 0\nbulk_hosts = 0\nlayers = 2\nwarmup_requests = 0\n"
      "measured_requests = 4\noutput_tokens_min = 2\noutput_tokens_max = 3\n";
  std::string steps[2];
  for (const int placed : {0, 1}) {
    const fs::path scenario =
        write_temp("safs-inference-hosts.toml", job + (placed ? "hosts = [9, 11, 10]\n" : ""));
    const fs::path out = safs::testing::process_temp_dir() / "safs-inference-hosts";
    fs::remove_all(out);
    const CliResult r = run_cli("run " + scenario.string() + " --quiet --out " + out.string());
    ASSERT_EQ(r.exit_code, 0) << r.output;
    steps[placed] = read_text(out / "steps.csv");
    const std::string flows = read_text(out / "flows.csv");
    // flows.csv: id,src,dst,...; the FFN instance is host 2, or 10 when placed.
    EXPECT_TRUE(contains(flows, placed ? "\n0,9,10," : "\n0,0,2,")) << flows;
  }
  EXPECT_FALSE(steps[0].empty());
  EXPECT_EQ(steps[0], steps[1]);

  for (const auto& [hosts, message] :
       {std::pair{"[9, 10]", "inference.hosts: lists 2 hosts; the job has 3"},
        std::pair{"[9, 10, 9]", "inference.hosts: lists host 9 twice"},
        std::pair{"[9, 10, 12]", "inference.hosts: host 12 is out of range"}}) {
    const fs::path bad =
        write_temp("safs-inference-bad-hosts.toml", job + "hosts = " + hosts + "\n");
    expect_bad_input(run_cli("validate " + bad.string()), message);
  }
  const fs::path shared = write_temp(
      "safs-inference-shared-host.toml",
      job + "hosts = [4, 5, 6]\n[pipeline]\nstages = 2\nmicrobatches = 2\nstage_hosts = [6, 7]\n");
  expect_bad_input(run_cli("validate " + shared.string()),
                   "inference.hosts: uses host 6, where a training job ([pipeline], outputs "
                   "ops.csv) runs");
}

TEST(CliBadInput, BuffersSmallerThanOnePacket) {
  const fs::path scenario = write_temp("safs-bad-input-buffer.toml", kSmall);
  expect_bad_input(
      run_cli("validate " + scenario.string() + " --set network.shared_buffer_bytes=100"),
      "network.shared_buffer_bytes: smaller than one full packet");
  // pFabric's own buffer is checked when the run is built, before any output is written.
  const fs::path out = safs::testing::process_temp_dir() / "safs-bad-input-pfabric";
  fs::remove_all(out);
  const CliResult r = run_cli("run " + scenario.string() +
                              " --transport pfabric --set transport.pfabric.buffer_bytes=100 "
                              "--quiet --out " +
                              out.string());
  expect_bad_input(r, "transport.pfabric.buffer_bytes: 100 is smaller than one full packet");
  EXPECT_FALSE(fs::exists(out));
}

TEST(CliBadInput, OverrideForATransportNotInUseIsReported) {
  const fs::path scenario = write_temp("safs-bad-input-other.toml", kSmall);
  const CliResult r =
      run_cli("validate " + scenario.string() + " --set transport.safs.urgent_first=true");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--set transport.safs.urgent_first: the run uses transport "
                       "dctcp, so this key is ignored"))
      << r.output;
}

// SAFS keys of docs/safs.md (the sender side, grants on ACKs): each bad
// value names its key and what it expected.
TEST(CliBadInput, SafsSenderKeysOutOfRange) {
  const fs::path scenario = write_temp("safs-bad-input-safs.toml", kSmall);
  const std::string run = "validate " + scenario.string() + " --set transport.name=safs --set ";
  expect_bad_input(run_cli(run + "transport.safs.whole_flow_blind_bdps=0.5"),
                   "transport.safs.whole_flow_blind_bdps: expected a value in [1, 1e+06], got 0.5");
  expect_bad_input(run_cli(run + "transport.safs.report_horizon_us=-1"),
                   "transport.safs.report_horizon_us: expected a value in [0, 1e+06] us, got -1");
  // The switches: a key and a value that is not a boolean.
  const std::pair<const char*, const char*> switches[] = {
      {"stream_leases", "maybe"}, {"learn_blind_budget", "7"},
      {"grant_background", "no"}, {"blind_cap_as_window", "1.5"},
      {"slack_adaptive", "yes"},  {"urgent_over_blind_background", "2"},
  };
  for (const auto& [key, value] : switches) {
    const std::string name = std::string("transport.safs.") + key;
    expect_bad_input(run_cli(run + name + "=" + value),
                     name + ": expected boolean (true or false)");
  }
  expect_bad_input(
      run_cli(run + "transport.safs.line_rate_slack_rtts=-1"),
      "transport.safs.line_rate_slack_rtts: expected a value in [0, 1e+06] RTTs, got -1");
  expect_bad_input(run_cli(run + "transport.safs.blind_budget_decrease=2"),
                   "transport.safs.blind_budget_decrease: expected a value in [0.05, 1], got 2");
  expect_bad_input(
      run_cli(run + "transport.safs.blind_budget_growth_us=-1"),
      "transport.safs.blind_budget_growth_us: expected a value in [0, 1e+09] us, got -1");
  for (const char* value : {"-1", "2000"}) {
    expect_bad_input(
        run_cli(run + "transport.safs.grant_carrier_wait_us=" + value),
        std::string(
            "transport.safs.grant_carrier_wait_us: expected a value in [0, 1000] us, got ") +
            value);
  }
  expect_bad_input(run_cli(run + "transport.safs.grant_carrier_wait_us=soon"),
                   "transport.safs.grant_carrier_wait_us: expected number (us)");
}

// The imperfect-timestamp keys (docs/imperfect-semantics.md) name their key
// and what they expected too.
TEST(CliBadInput, TimestampKeysOutOfRange) {
  const fs::path scenario = write_temp("safs-bad-input-timestamps.toml", kSmall);
  const std::string run = "validate " + scenario.string() + " --set ";
  expect_bad_input(run_cli(run + "timestamps.waiting_updates=3"),
                   "timestamps.waiting_updates: expected boolean (true or false)");
  expect_bad_input(run_cli(run + "timestamps.bias_of_slack=-2"),
                   "timestamps.bias_of_slack: expected a value in [-1, 10]");
}

}  // namespace
