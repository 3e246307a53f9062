// Reads byte ranges back from a spill file (flows.csv's lines, written in the
// order flows finish) for a pass that wants them in another order (flow id).
// Flows finish roughly in id order, so consecutive requests lie close
// together: the reader fetches aligned blocks and keeps the last few
// (direct-mapped by block number), so one read serves hundreds of lines.
// One read per line cost a system call per flow: 9.7 million of them at the
// end of a 64A8F inference run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace safs {

class SpillReader {
 public:
  // `fd` is open for reading and outlives the reader; `path` names it in errors.
  SpillReader(int fd, std::string path);

  // Appends the `length` bytes at `offset` to `out`; throws std::runtime_error
  // when the file cannot be read or ends before them.
  void append(std::string& out, std::uint64_t offset, std::size_t length);

  // Blocks read from the file so far.
  std::size_t blocks_read() const { return blocks_read_; }

  static constexpr std::size_t kBlockBytes = std::size_t{64} << 10;
  static constexpr std::size_t kCachedBlocks = 64;  // 4 MiB held

 private:
  struct Slot {
    std::uint64_t block = ~std::uint64_t{0};  // none
    std::size_t valid_bytes = 0;              // less than kBlockBytes at the file's end
  };
  // The cached slot holding block `block`, read now if it is not held.
  const Slot& fetch(std::uint64_t block);
  // The slot's kBlockBytes in data_.
  char* data_of(const Slot& slot);

  int fd_;
  std::string path_;
  std::vector<char> data_;  // kCachedBlocks blocks
  std::vector<Slot> slots_;
  std::size_t blocks_read_ = 0;
};

}  // namespace safs
