#include "experiment/spill_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/cli_run.h"

namespace safs {
namespace {

// A spill file of `text`, unlinked at once (as FlowsCsvFile's is), open for reading.
class SpillFile {
 public:
  explicit SpillFile(const std::string& text) {
    // In this process's own directory: ctest runs this file's tests at once.
    const std::string path = (testing::process_temp_dir() / "safs-spill-reader-test").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ::unlink(path.c_str());
    EXPECT_GE(fd_, 0);
    EXPECT_EQ(::write(fd_, text.data(), text.size()), static_cast<ssize_t>(text.size()));
  }
  ~SpillFile() { ::close(fd_); }
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// Lines of random lengths (up to a few hundred bytes, and some longer than a
// block), so that many straddle a block boundary.
std::vector<std::string> random_lines(std::mt19937_64& rng, std::size_t count) {
  std::vector<std::string> lines;
  std::uniform_int_distribution<std::size_t> length(1, 300);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t n = i % 997 == 0 ? SpillReader::kBlockBytes - 1 : length(rng);
    std::string line(n, '\0');
    for (char& c : line) c = static_cast<char>('a' + rng() % 26);
    lines.push_back(std::move(line));
  }
  return lines;
}

TEST(SpillReader, ReadsEveryRangeBackInAnyOrder) {
  std::mt19937_64 rng(7);
  const std::vector<std::string> lines = random_lines(rng, 40000);
  std::string text;
  std::vector<std::uint64_t> offset;
  for (const std::string& line : lines) {
    offset.push_back(text.size());
    text += line;
  }
  ASSERT_GT(text.size(), SpillReader::kCachedBlocks * SpillReader::kBlockBytes);  // evicts
  const SpillFile file(text);

  // Nearly in file order (how flows finish against their ids), then shuffled.
  std::vector<std::size_t> order(lines.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = 0; i + 5 < order.size(); i += 7) std::swap(order[i], order[i + 5]);
  SpillReader near(file.fd(), "spill");
  for (const std::size_t i : order) {
    std::string out = "x";
    near.append(out, offset[i], lines[i].size());
    ASSERT_EQ(out, "x" + lines[i]) << "line " << i;
  }
  // One read per block, give or take the ones evicted and read again.
  const std::size_t blocks =
      (text.size() + SpillReader::kBlockBytes - 1) / SpillReader::kBlockBytes;
  EXPECT_LE(near.blocks_read(), blocks + blocks / 10);

  std::shuffle(order.begin(), order.end(), rng);
  SpillReader shuffled(file.fd(), "spill");
  for (const std::size_t i : order) {
    std::string out;
    shuffled.append(out, offset[i], lines[i].size());
    ASSERT_EQ(out, lines[i]) << "line " << i;
  }
}

TEST(SpillReader, ARangePastTheEndIsAnError) {
  const SpillFile file("abcdef");
  SpillReader reader(file.fd(), "flows.csv");
  std::string out;
  reader.append(out, 2, 4);
  EXPECT_EQ(out, "cdef");
  try {
    reader.append(out, 4, 3);
    FAIL() << "read past the end";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("flows.csv: spill read failed"), std::string::npos);
  }
  EXPECT_THROW(reader.append(out, SpillReader::kBlockBytes * 3, 1), std::runtime_error);
}

}  // namespace
}  // namespace safs
