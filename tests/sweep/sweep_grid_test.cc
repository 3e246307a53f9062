// A sweep's grid: points named by the shortest key suffix that tells the
// axes apart.
#include <gtest/gtest.h>

#include "sweep/sweep_grid.h"

namespace safs::sweep {
namespace {

std::vector<std::string> names(const std::vector<GridAxis>& axes) {
  std::vector<std::string> out;
  for (const SweepPoint& p : expand_grid(axes)) out.push_back(p.name);
  return out;
}

// A key shorter than another axis's suffix (the short_key out-of-bounds read
// UBSan reported; the library is built with bounds-checked indexing, so the
// read would abort here).
TEST(SweepGrid, KeysOfDifferentLengthsGetTheirLastComponent) {
  const std::vector<GridAxis> axes = {parse_axis("simulation.seed=1"),
                                      parse_axis("network.ecn_threshold_bytes=100000")};
  EXPECT_EQ(names(axes), std::vector<std::string>{"seed=1,ecn_threshold_bytes=100000"});
}

TEST(SweepGrid, SharedLastComponentsKeepMoreOfTheKey) {
  const std::vector<GridAxis> axes = {parse_axis("a.rate=1,2"), parse_axis("b.rate=3"),
                                      parse_axis("transport.name=dctcp")};
  EXPECT_EQ(names(axes), (std::vector<std::string>{"a.rate=1,b.rate=3,transport=dctcp",
                                                   "a.rate=2,b.rate=3,transport=dctcp"}));
  // "xrate" ends like "rate" but not at a component boundary.
  EXPECT_EQ(names({parse_axis("x.xrate=1"), parse_axis("y.rate=2")}),
            std::vector<std::string>{"xrate=1,rate=2"});
}

}  // namespace
}  // namespace safs::sweep
