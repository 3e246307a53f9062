// safs-sim's outputs are never lost or mixed, and say where they came from:
// a non-empty --out is refused without --force, which removes only the tool's
// own files; default directories differ by override; a bad --trace fails
// before the run; a sweep reuses only points run with the same scenario and
// stops its children on SIGTERM; summary.json records its provenance.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/cli_run.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;

using namespace safs::testing;  // run_cli and its helpers

const char* const kSmall = kSmallScenario;

// A fresh directory per test (ctest runs them in parallel and again later).
fs::path fresh(const std::string& name) {
  const fs::path dir = safs::testing::process_temp_dir() / ("safs-outputs-" + name);
  fs::remove_all(dir);
  return dir;
}

TEST(CliOutputs, NonEmptyOutNeedsForceWhichRemovesOnlyRunFiles) {
  const fs::path scenario = write_temp("safs-outputs-small.toml", kSmall);
  const fs::path out = fresh("force");
  const std::string run = "run " + scenario.string() + " --quiet --out " + out.string();
  ASSERT_EQ(run_cli(run).exit_code, 0);
  const CliResult again = run_cli(run);
  EXPECT_EQ(again.exit_code, 2);
  EXPECT_TRUE(contains(again.output, "--force")) << again.output;

  std::ofstream(out / "notes.txt") << "mine";
  std::ofstream(out / "steps.csv") << "stale";  // an earlier inference run's
  ASSERT_EQ(run_cli(run + " --force").exit_code, 0);
  EXPECT_EQ(read_text(out / "notes.txt"), "mine");
  EXPECT_FALSE(fs::exists(out / "steps.csv"));
  EXPECT_TRUE(fs::exists(out / "summary.json"));

  const CliResult empty = run_cli("run " + scenario.string() + " --out ''");
  EXPECT_EQ(empty.exit_code, 2);
  EXPECT_TRUE(contains(empty.output, "--out: empty")) << empty.output;
}

TEST(CliOutputs, DefaultDirectoryDependsOnTheOverrides) {
  const fs::path scenario = write_temp("safs-outputs-default.toml", kSmall);
  const fs::path cwd = fresh("default");
  fs::create_directories(cwd);
  const std::string sim = SAFS_SIM_PATH;
  for (const char* gbps : {"10", "25"}) {
    const std::string command = "cd " + cwd.string() + " && " + sim + " run " + scenario.string() +
                                " --quiet --set topology.link_gbps=" + gbps;
    ASSERT_EQ(std::system(command.c_str()), 0) << command;
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(cwd / "out"))
    names.push_back(entry.path().filename().string());
  ASSERT_EQ(names.size(), 2u);
  EXPECT_NE(names[0], names[1]);
  for (const std::string& name : names) {
    EXPECT_EQ(name.rfind("safs-outputs-default-dctcp-", 0), 0u) << name;
  }
}

TEST(CliOutputs, TraceIntoADirectoryFailsBeforeTheRun) {
  const fs::path scenario = write_temp("safs-outputs-trace.toml", kSmall);
  const fs::path out = fresh("trace");
  const auto start = std::chrono::steady_clock::now();
  const CliResult r = run_cli("run " + scenario.string() + " --out " + out.string() + " --trace " +
                              fs::temp_directory_path().string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "--trace")) << r.output;
  EXPECT_FALSE(fs::exists(out / "summary.json"));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

// An existing --trace file is the user's: refused (exit 2, nothing run)
// unless --force, and the scenario file itself always.
TEST(CliOutputs, AnExistingTraceFileIsReplacedOnlyWithForce) {
  const fs::path scenario = write_temp("safs-outputs-existing-trace.toml", kSmall);
  const fs::path out = fresh("existing-trace");
  const fs::path trace = fs::temp_directory_path() / "safs-outputs-existing-trace.json";
  { std::ofstream(trace) << "the user's"; }
  CliResult r = run_cli("run " + scenario.string() + " --quiet --out " + out.string() +
                        " --trace " + trace.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "--force")) << r.output;
  EXPECT_EQ(read_text(trace), "the user's");
  EXPECT_FALSE(fs::exists(out / "summary.json"));
  r = run_cli("run " + scenario.string() + " --quiet --force --out " + out.string() + " --trace " +
              scenario.string());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(contains(r.output, "scenario file")) << r.output;
  EXPECT_EQ(read_text(scenario), kSmall);
  r = run_cli("run " + scenario.string() + " --quiet --force --out " + out.string() + " --trace " +
              trace.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(read_text(trace), "the user's");
}

TEST(CliOutputs, SummaryRecordsProvenance) {
  const fs::path scenario = write_temp("safs-outputs-provenance.toml", kSmall);
  const fs::path out = fresh("provenance");
  ASSERT_EQ(run_cli("run " + scenario.string() + " --quiet --transport reno --seed 7 --set " +
                    "topology.link_gbps=10 --out " + out.string())
                .exit_code,
            0);
  const nlohmann::json summary = nlohmann::json::parse(read_text(out / "summary.json"));
  const nlohmann::json& p = summary["provenance"];
  EXPECT_EQ(p["overrides"], nlohmann::json({"topology.link_gbps=10", "transport.name=\"reno\"",
                                            "simulation.seed=7"}));
  EXPECT_EQ(p["effective"]["transport"], "reno");
  EXPECT_EQ(p["effective"]["seed"], 7);
  // The scenario as run: the file with every override applied, read back as TOML.
  const std::string effective = p["effective"]["scenario_toml"].get<std::string>();
  EXPECT_NE(effective.find("link_gbps = 10"), std::string::npos) << effective;
  EXPECT_NE(effective.find("name = 'reno'"), std::string::npos) << effective;
  EXPECT_NE(effective.find("size_bytes = 100000"), std::string::npos) << effective;
  EXPECT_EQ(p["command_line"][1], "run");
  EXPECT_FALSE(p["host"].get<std::string>().empty());
  EXPECT_FALSE(p["source_commit"].get<std::string>().empty());
  EXPECT_EQ(p["scenario_fingerprint"].get<std::string>().size(), 16u);
  EXPECT_DOUBLE_EQ(summary["wall_s"].get<double>(),
                   summary["setup_wall_s"].get<double>() + summary["run_wall_s"].get<double>());

  const CliResult version = run_cli("--version");
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.output.rfind("safs-sim " + p["tool_version"].get<std::string>() + " (source " +
                                     p["source_commit"].get<std::string>() + ")",
                                 0),
            0u)
      << version.output;
}

const char* kSweep =
    "[topology]\nhosts = 3\n[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = 100000\n"
    "[sweep]\ngrid = [\"transport.name=dctcp,reno\"]\nmetrics = [\"flows.fct_mean_s\"]\n";

TEST(CliOutputs, SweepReusesOnlyPointsOfTheSameScenario) {
  const fs::path scenario = write_temp("safs-outputs-sweep.toml", kSweep);
  const fs::path out = fresh("sweep");
  const std::string sweep = "sweep " + scenario.string() + " --quiet --out " + out.string();
  ASSERT_EQ(run_cli(sweep + " --set topology.link_gbps=10").exit_code, 0);
  const CliResult same = run_cli(sweep + " --set topology.link_gbps=10");
  EXPECT_EQ(same.exit_code, 0) << same.output;
  const CliResult other = run_cli(sweep + " --set topology.link_gbps=25");
  EXPECT_EQ(other.exit_code, 2);
  EXPECT_TRUE(contains(other.output, "point transport=dctcp")) << other.output;
  EXPECT_TRUE(contains(other.output, "topology.link_gbps: 10 before, 25 now")) << other.output;
}

// Processes whose command line mentions `marker` (the sweep's --out).
int processes_mentioning(const std::string& marker) {
  int count = 0;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string cmdline = read_text(entry.path() / "cmdline");
    if (contains(cmdline, marker)) ++count;
  }
  return count;
}

TEST(CliOutputs, SigtermStopsTheSweepsChildrenAndKeepsFinishedPoints) {
  // The first point ends at once; the two others take many seconds each.
  const fs::path scenario = write_temp("safs-outputs-sigterm.toml", kSmall);
  const fs::path out = fresh("sigterm");
  const std::string out_text = out.string();
  std::vector<std::string> args = {SAFS_SIM_PATH, "sweep", scenario.string(), "--quiet", "-j", "2",
                                   "--grid",      "",      "--out",           out_text};
  args[7] = "flows[0].size_bytes=100000,20000000000,30000000000";
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t sweep = 0;
  ASSERT_EQ(posix_spawn(&sweep, argv[0], nullptr, nullptr, argv.data(), environ), 0);

  const fs::path first = out / "size_bytes=100000" / "summary.json";
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fs::exists(first) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(fs::exists(first));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the next point starts
  kill(sweep, SIGTERM);
  int status = 0;
  ASSERT_EQ(waitpid(sweep, &status, 0), sweep);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 128 + SIGTERM);
  EXPECT_EQ(processes_mentioning(out_text), 0);
  EXPECT_TRUE(nlohmann::json::parse(read_text(first)).contains("flows"));
  EXPECT_FALSE(fs::exists(out / "size_bytes=30000000000" / "summary.json"));
}

}  // namespace
