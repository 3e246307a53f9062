// Memory follows bytes in flight, not flow sizes: the same short run with a
// 1e12-byte and a 1e15-byte flow (the documented maximum) peaks at the same
// resident size with every transport, with and without loss (so that the
// retransmission paths run too).
#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "support/cli_run.h"

namespace {

namespace fs = std::filesystem;
using namespace safs::testing;

double peak_rss_mib(const std::string& transport, const std::string& size_bytes,
                    const std::string& loss_rate) {
  const fs::path scenario = write_temp(
      "safs-memory-" + size_bytes + "-" + loss_rate + ".toml",
      "[topology]\nhosts = 3\n[simulation]\nstop_ms = 1\n[network]\nlink_loss_rate = " + loss_rate +
          "\n[[flows]]\nsrc = 1\ndst = 0\nsize_bytes = " + size_bytes + "\n");
  const fs::path out = safs::testing::process_temp_dir() /
                       ("safs-memory-" + transport + "-" + size_bytes + "-" + loss_rate);
  fs::remove_all(out);
  const CliResult r = run_cli("run " + scenario.string() + " --quiet --transport " + transport +
                              " --out " + out.string());
  EXPECT_EQ(r.exit_code, 0) << transport << ": " << r.output;
  if (r.exit_code != 0) return -1;
  return nlohmann::json::parse(read_text(out / "summary.json"))["peak_rss_mib"].get<double>();
}

class FlowSizeMemory : public ::testing::TestWithParam<const char*> {};

TEST_P(FlowSizeMemory, PeakRssDoesNotGrowWithTheFlowSize) {
  for (const char* loss : {"0", "0.001"}) {
    const double small = peak_rss_mib(GetParam(), "1000000000000", loss);
    const double huge = peak_rss_mib(GetParam(), "1000000000000000", loss);
    ASSERT_GT(small, 0);
    // One bit per 4 KiB segment of 1e15 bytes would be 30 GB; a few MiB of
    // slack covers the allocator and the output buffers.
    EXPECT_LT(huge, small + 4) << GetParam() << ", loss " << loss << ": " << small << " MiB vs "
                               << huge << " MiB";
  }
}

INSTANTIATE_TEST_SUITE_P(Transports, FlowSizeMemory,
                         ::testing::Values("dctcp", "d2tcp", "reno", "safs", "homa", "pfabric"));

}  // namespace
