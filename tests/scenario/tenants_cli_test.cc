// `[transport] background` from the command line: absent, empty or equal to
// `name`, a run is the single-transport run, byte for byte; set to another
// transport, the run reports both; bad combinations exit 2 before any output.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;

using namespace safs::testing;  // run_cli and its helpers

// Urgent flows with deadlines and background flows sharing host 0's downlink.
constexpr const char* kFlows =
    "[topology]\nhosts = 4\n"
    "[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = 400000\nclass = \"urgent\"\ndeadline_us = 200\n"
    "[[flows]]\nsrc = 2\ndst = 0\nsize_bytes = 400000\nclass = \"urgent\"\ndeadline_us = 200\n"
    "[[flows]]\nsrc = 3\ndst = 0\nsize_bytes = 2000000\n"
    "[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = 2000000\n";

struct RunOutputs {
  std::string flows_csv;
  nlohmann::json summary;
};

// Runs kFlows with `transport` lines in its [transport] table.
RunOutputs run_with(const std::string& name, const std::string& transport,
                    const std::string& args = "") {
  const fs::path scenario = write_temp("safs-tenants-" + name + ".toml",
                                       std::string(kFlows) + "[transport]\n" + transport);
  const fs::path out = process_temp_dir() / ("tenants-" + name);
  fs::remove_all(out);
  const CliResult r =
      run_cli("run " + scenario.string() + " --quiet " + args + " --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return {read_text(out / "flows.csv"), nlohmann::json::parse(read_text(out / "summary.json"))};
}

TEST(Tenants, BackgroundAbsentEmptyOrEqualToNameIsTheSingleTransportRun) {
  const RunOutputs alone = run_with("alone", "name = \"safs\"\n");
  ASSERT_FALSE(alone.flows_csv.empty());
  EXPECT_FALSE(alone.summary.contains("background_transport"));
  EXPECT_FALSE(alone.summary["urgent"].contains("transport"));
  for (const char* same : {"background = \"safs\"\n", "background = \"\"\n"}) {
    const RunOutputs r = run_with("same", std::string("name = \"safs\"\n") + same);
    EXPECT_EQ(r.flows_csv, alone.flows_csv) << same;
    EXPECT_FALSE(r.summary.contains("background_transport")) << same;
  }
}

TEST(Tenants, MixedRunReportsBothTransports) {
  const RunOutputs alone = run_with("alone", "name = \"safs\"\n");
  const RunOutputs mixed = run_with("mixed", "name = \"safs\"\nbackground = \"reno\"\n");
  EXPECT_NE(mixed.flows_csv, alone.flows_csv) << "background flows ran on Reno";
  EXPECT_EQ(mixed.summary["transport"], "safs");
  EXPECT_EQ(mixed.summary["background_transport"], "reno");
  EXPECT_EQ(mixed.summary["urgent"]["transport"], "safs");
  EXPECT_EQ(mixed.summary["background"]["transport"], "reno");
  EXPECT_EQ(mixed.summary["urgent"]["completed"], 2);
  EXPECT_EQ(mixed.summary["background"]["completed"], 2);
  EXPECT_EQ(mixed.summary["background"]["control_packets_per_flow"], 0.0) << "Reno: ACKs only";
  EXPECT_GT(mixed.summary["urgent"]["control_packets_per_flow"].get<double>(), 0.0);
  EXPECT_EQ(mixed.summary["provenance"]["effective"]["background_transport"], "reno");
}

TEST(Tenants, CommandLineTransportSetsNameOnly) {
  const RunOutputs r =
      run_with("cli", "name = \"safs\"\nbackground = \"reno\"\n", "--transport dctcp");
  EXPECT_EQ(r.summary["transport"], "dctcp");
  EXPECT_EQ(r.summary["background_transport"], "reno");
}

void expect_bad_input(const CliResult& r, const std::string& message) {
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, message)) << r.output;
}

TEST(Tenants, UnknownBackgroundSuggestsTheClosest) {
  const fs::path scenario = write_temp("safs-tenants-unknown.toml", kSmallScenario);
  expect_bad_input(run_cli("validate " + scenario.string() + " --set transport.background=rneo"),
                   "transport.background: 'rneo' is not one of");
  expect_bad_input(run_cli("validate " + scenario.string() + " --set transport.background=rneo"),
                   "did you mean 'reno'?");
}

TEST(Tenants, AnOwnSwitchQueueOnOneSideIsRefusedBeforeAnyOutput) {
  const fs::path scenario = write_temp("safs-tenants-pfabric.toml", kSmallScenario);
  const fs::path out = process_temp_dir() / "tenants-pfabric";
  fs::remove_all(out);
  const CliResult r = run_cli("run " + scenario.string() +
                              " --transport dctcp --set transport.background=pfabric --quiet "
                              "--out " +
                              out.string());
  expect_bad_input(r, "transport.background: pfabric needs its own switch queue discipline");
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
