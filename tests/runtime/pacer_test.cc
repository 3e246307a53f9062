// The Pacer's user-space bucket owes only what it paced itself.
#include "runtime/pacer.h"

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "runtime/test_support.h"

namespace safs::runtime::testing {
namespace {

// A flow kernel-paced above the floor (or unpaced) writes megabytes; lowered
// below the floor, the bucket takes over. Its first write must wait about
// one quantum at the new rate, not until the bytes written before were
// "repaid" at it (8 MiB at 1 MB/s: 8 s).
void lowered_below_the_floor_writes_soon(PacingMode mode, double first_bps) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  Pacer pacer(fd, mode);
  const std::int64_t start = 1'000 * kMs;
  pacer.set_rate(first_bps, start);
  pacer.on_written(8 << 20);
  const std::int64_t lowered = start + 80 * kMs;
  pacer.set_rate(8e6, lowered);  // 1 MB/s
  EXPECT_LE(pacer.next_write_ns(lowered) - lowered, 20 * kMs);
  // What it then writes is paced: a second 8 MiB is owed at 1 MB/s.
  pacer.on_written(8 << 20);
  EXPECT_GE(pacer.next_write_ns(lowered) - lowered, 7 * kSecond);
  close(fd);
}

TEST(Pacer, KernelPacedBytesAreNoDebtForTheBucket) {
  const int probe = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(probe, 0);
  const bool kernel = Pacer(probe, PacingMode::kAuto).kernel_paced();
  close(probe);
  if (!kernel) GTEST_SKIP() << "this kernel refuses SO_MAX_PACING_RATE";
  lowered_below_the_floor_writes_soon(PacingMode::kAuto, 800e6);  // 100 MB/s
}

TEST(Pacer, UnpacedBytesAreNoDebtForTheBucket) {
  lowered_below_the_floor_writes_soon(PacingMode::kUserspace, Pacer::kUnpaced);
  lowered_below_the_floor_writes_soon(PacingMode::kAuto, Pacer::kUnpaced);
}

}  // namespace
}  // namespace safs::runtime::testing
