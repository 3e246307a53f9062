// The memory check of `validate` and `run`: a scenario estimated to need
// more than the limit is refused with the estimate (exit 2) before anything
// is built, and the limit comes from --memory-limit-gb or the environment.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;

using namespace safs::testing;  // run_cli and its helpers

// 524,288 hosts and 3.1 M ports: about 2.5 GB.
const char* const kFatTree128 =
    "[topology]\nkind = \"fat_tree\"\nk = 128\n[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = 100000\n";

TEST(CliMemory, ValidateGivesTheEstimate) {
  const fs::path small = write_temp("safs-memory-small.toml", kSmallScenario);
  const CliResult r = run_cli("validate " + small.string());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, " kB of memory)")) << r.output;
}

// On any machine a k = 128 fat tree is either accepted with its estimate or
// refused with it; validate never builds it.
TEST(CliMemory, LargeFatTreeIsEstimatedNotBuilt) {
  const fs::path big = write_temp("safs-memory-k128.toml", kFatTree128);
  const CliResult r = run_cli("validate " + big.string());
  if (r.exit_code == 0) {
    EXPECT_TRUE(contains(r.output, "524288 hosts")) << r.output;
    EXPECT_TRUE(contains(r.output, " GB of memory)")) << r.output;
  } else {
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, "would need about")) << r.output;
  }
}

TEST(CliMemory, OverTheLimitIsRefusedWithTheEstimate) {
  const fs::path big = write_temp("safs-memory-k128-run.toml", kFatTree128);
  const fs::path out = safs::testing::process_temp_dir() / "safs-memory-refused";
  fs::remove_all(out);
  for (const std::string& command :
       {"validate " + big.string(), "run " + big.string() + " --out " + out.string()}) {
    const CliResult r = run_cli(command + " --memory-limit-gb 1");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_TRUE(contains(r.output, big.string() + ": the run would need about ")) << r.output;
    EXPECT_TRUE(contains(r.output, "ports ")) << r.output;
    EXPECT_TRUE(contains(r.output, "more than the memory limit of 1.0 GB")) << r.output;
  }
  EXPECT_FALSE(fs::exists(out)) << "a refused run creates no output directory";
}

// What reaches the runs a sweep starts; the option still wins over it.
TEST(CliMemory, TheEnvironmentSetsTheLimit) {
  const fs::path big = write_temp("safs-memory-k128-env.toml", kFatTree128);
  setenv("SAFS_MEMORY_LIMIT_GB", "1", 1);
  const CliResult refused = run_cli("validate " + big.string());
  const CliResult raised = run_cli("validate " + big.string() + " --memory-limit-gb 1000");
  unsetenv("SAFS_MEMORY_LIMIT_GB");
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_TRUE(contains(refused.output, "more than the memory limit of 1.0 GB")) << refused.output;
  EXPECT_EQ(raised.exit_code, 0) << raised.output;
}

// The packet pool is bounded by the switch buffers a flow can fill: a huge
// flow into huge buffers is refused for its packets, not its flow state.
TEST(CliMemory, PacketsForTheBuffersCount) {
  const fs::path flood = write_temp("safs-memory-buffers.toml",
                                    "[topology]\nhosts = 3\n[network]\nport_buffer_bytes = "
                                    "1000000000000\n[[flows]]\nsrc = 1\ndst = 0\n"
                                    "size_bytes = 1000000000000000\n");
  const CliResult r = run_cli("validate " + flood.string() + " --memory-limit-gb 10");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "packets up to 93.8 GB")) << r.output;
}

}  // namespace
