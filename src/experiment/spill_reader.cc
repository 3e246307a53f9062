#include "experiment/spill_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace safs {

SpillReader::SpillReader(int fd, std::string path)
    : fd_(fd), path_(std::move(path)), data_(kCachedBlocks * kBlockBytes), slots_(kCachedBlocks) {}

char* SpillReader::data_of(const Slot& slot) {
  return data_.data() + static_cast<std::size_t>(&slot - slots_.data()) * kBlockBytes;
}

const SpillReader::Slot& SpillReader::fetch(std::uint64_t block) {
  Slot& slot = slots_[block % kCachedBlocks];
  if (slot.block == block) return slot;
  slot.block = ~std::uint64_t{0};  // not valid until the read succeeds
  char* into = data_of(slot);
  const auto offset = static_cast<off_t>(block * kBlockBytes);
  std::size_t got = 0;
  while (got < kBlockBytes) {
    const ssize_t n = ::pread(fd_, into + got, kBlockBytes - got, offset + static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0)
      throw std::runtime_error(path_ + ": spill read failed (" + std::strerror(errno) + ")");
    if (n == 0) break;  // the file's end
    got += static_cast<std::size_t>(n);
  }
  slot.block = block;
  slot.valid_bytes = got;
  ++blocks_read_;
  return slot;
}

void SpillReader::append(std::string& out, std::uint64_t offset, std::size_t length) {
  while (length > 0) {
    const Slot& slot = fetch(offset / kBlockBytes);
    const std::size_t within = offset % kBlockBytes;
    if (within >= slot.valid_bytes) {
      throw std::runtime_error(path_ + ": spill read failed (file ends at byte " +
                               std::to_string(offset) + ")");
    }
    const std::size_t take = std::min(length, slot.valid_bytes - within);
    out.append(data_of(slot) + within, take);
    offset += take;
    length -= take;
  }
}

}  // namespace safs
