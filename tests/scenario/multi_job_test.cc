// Several training jobs in one run ([[pipeline]], one entry per job). On a
// star, jobs on hosts of their own share no link, so each job must come out
// exactly as it does alone; a job's outputs are named by its place (ops.csv,
// ops_2.csv; "compute", "compute_2"); a host given to two jobs, or an
// override that does not say which job it means, exits 2 with the file, line
// and key.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using safs::testing::contains;
using safs::testing::process_temp_dir;
using safs::testing::read_text;
using safs::testing::run_cli;
using safs::testing::write_temp;

const std::string kTopology = "[topology]\nkind = \"star\"\nhosts = 8\n";
// A ZB-H1 job on hosts 0-1 and a 1F1B job on hosts 2-4: 1 ms ops, 0.5 MiB transfers.
const std::string kJobA =
    "stages = 2\nmicrobatches = 4\nforward_ms = 1\nbackward_ms = 1\nweight_ms = 1\n"
    "sequence = 256\nstage_hosts = [0, 1]\n";
const std::string kJobB =
    "schedule = \"1f1b\"\nstages = 3\nmicrobatches = 4\nforward_ms = 1\nbackward_ms = 1\n"
    "weight_ms = 1\nsequence = 256\nstage_hosts = [2, 3, 4]\n";
const std::string kBothJobs = kTopology + "[[pipeline]]\n" + kJobA + "[[pipeline]]\n" + kJobB;

fs::path run_to(const std::string& name, const std::string& scenario_text,
                const std::string& args = "") {
  const fs::path scenario = write_temp(name + ".toml", scenario_text);
  const fs::path out = process_temp_dir() / name;
  fs::remove_all(out);
  const auto r =
      run_cli("run " + scenario.string() + " --quiet --out " + out.string() + " " + args);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return out;
}

nlohmann::json summary(const fs::path& out) {
  return nlohmann::json::parse(read_text(out / "summary.json"));
}

class MultiJob : public ::testing::TestWithParam<std::string> {};

TEST_P(MultiJob, EachJobRunsAsItDoesAlone) {
  const std::string transport = "--transport " + GetParam();
  const fs::path both = run_to("both-" + GetParam(), kBothJobs, transport);
  const fs::path a = run_to("a-" + GetParam(), kTopology + "[pipeline]\n" + kJobA, transport);
  const fs::path b = run_to("b-" + GetParam(), kTopology + "[pipeline]\n" + kJobB, transport);

  EXPECT_EQ(read_text(both / "ops.csv"), read_text(a / "ops.csv"));
  EXPECT_EQ(read_text(both / "ops_2.csv"), read_text(b / "ops.csv"));
  EXPECT_FALSE(fs::exists(a / "ops_2.csv"));
  const nlohmann::json j = summary(both);
  EXPECT_EQ(j["compute"], summary(a)["compute"]);
  EXPECT_EQ(j["compute_2"], summary(b)["compute"]);
  EXPECT_EQ(j["flows"]["total"],
            summary(a)["flows"]["total"].get<int>() + summary(b)["flows"]["total"].get<int>());
  // 1F1B over three stages is a longer iteration than ZB-H1 over two: the
  // run waited for both.
  EXPECT_GT(j["compute_2"]["iteration_time_s"].get<double>(),
            j["compute"]["iteration_time_s"].get<double>());
  EXPECT_TRUE(j["compute_2"]["finished"].get<bool>());
}

INSTANTIATE_TEST_SUITE_P(Transports, MultiJob, ::testing::Values("dctcp", "safs", "homa"));

TEST(MultiJobBadInput, AHostOfTwoJobsIsNamed) {
  std::string text = kBothJobs;
  text.replace(text.find("[2, 3, 4]"), 9, "[1, 3, 4]");
  const fs::path scenario = write_temp("overlap.toml", text);
  const auto r = run_cli("run " + scenario.string() + " --quiet --out " +
                         (process_temp_dir() / "overlap").string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "overlap.toml:12: pipeline[1]: runs on host 1, which already runs an "
                       "earlier job (the one whose outputs are ops.csv); each GPU host runs one "
                       "job"))
      << r.output;
}

TEST(MultiJobBadInput, AnOverrideNamesItsJob) {
  const fs::path scenario = write_temp("two-jobs.toml", kBothJobs);
  const auto r =
      run_cli("run " + scenario.string() + " --quiet --out " +
              (process_temp_dir() / "unnamed").string() + " --set pipeline.microbatches=3");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output,
                       "--set pipeline.microbatches=3: the file has several [[pipeline]] "
                       "entries; name one, as in pipeline[0].microbatches"))
      << r.output;
  EXPECT_FALSE(fs::exists(process_temp_dir() / "unnamed" / "summary.json"));
}

TEST(MultiJob, AnOverrideOfOneEntryChangesThatJobOnly) {
  // 1F1B over 3 stages with 3 micro-batches: 3 x 3 ops per stage.
  const fs::path out = run_to("override", kBothJobs, "--set pipeline[1].microbatches=3");
  const std::string ops_a = read_text(out / "ops.csv");
  const std::string ops_b = read_text(out / "ops_2.csv");
  EXPECT_EQ(std::count(ops_a.begin(), ops_a.end(), '\n'), 1 + 2 * 4 * 3);  // ZB-H1: F, B, W
  EXPECT_EQ(std::count(ops_b.begin(), ops_b.end(), '\n'), 1 + 3 * 3 * 2);  // 1F1B: F, B+W
}

TEST(MultiJob, ForceReplacesASecondJobsOutputsAndNothingElse) {
  const fs::path out = run_to("force", kBothJobs);
  ASSERT_TRUE(fs::exists(out / "ops_2.csv"));
  std::ofstream(out / "ops_2_notes.csv") << "mine\n";
  const fs::path scenario = write_temp("one-job.toml", kTopology + "[pipeline]\n" + kJobA);
  const auto r = run_cli("run " + scenario.string() + " --quiet --force --out " + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(fs::exists(out / "ops_2.csv"));  // the earlier run's, replaced
  EXPECT_TRUE(fs::exists(out / "ops.csv"));
  EXPECT_EQ(read_text(out / "ops_2_notes.csv"), "mine\n");  // not this tool's
}

}  // namespace
