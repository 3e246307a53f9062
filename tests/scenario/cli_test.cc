// safs-sim as a user meets it: exit codes and the files it writes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/wait.h>

namespace {

namespace fs = std::filesystem;

struct Result {
  int exit_code;
  std::string output;
};

Result run_cli(const std::string& args) {
  // ctest runs tests in parallel: one log per test.
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  const fs::path log = fs::temp_directory_path() / ("safs-cli-" + test + ".log");
  const std::string command =
      std::string(SAFS_SIM_PATH) + " " + args + " >" + log.string() + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::ostringstream text;
  text << in.rdbuf();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, text.str()};
}

fs::path write_temp(const std::string& name, const std::string& text) {
  const fs::path path = fs::temp_directory_path() / name;
  std::ofstream(path) << text;
  return path;
}

const char* kSmall = "[topology]\nhosts = 3\n[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = 100000\n";

TEST(Cli, RunWritesSummaryAndFlows) {
  const fs::path scenario = write_temp("safs-cli-small.toml", kSmall);
  const fs::path out = fs::temp_directory_path() / "safs-cli-out";
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
  EXPECT_NE(r.output.find("ok (3 hosts, 1 flows"), std::string::npos) << r.output;
}

}  // namespace
