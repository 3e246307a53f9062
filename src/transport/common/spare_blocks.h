// Memory blocks of one size, kept when freed and handed out again. Per-flow
// state comes and goes once per flow, millions of times in a long run, while
// only as many blocks as flows live at once are ever in use: reusing them
// spares the allocator that churn, and the memory held follows the peak of
// live flows, not the run's length.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace safs {

class SpareBlocks {
 public:
  explicit SpareBlocks(std::size_t block_bytes) : block_bytes_(block_bytes) {}
  ~SpareBlocks() { free_spares(); }
  SpareBlocks(const SpareBlocks&) = delete;
  SpareBlocks& operator=(const SpareBlocks&) = delete;

  std::size_t block_bytes() const { return block_bytes_; }
  // Uninitialised memory of block_bytes(), aligned for any type up to
  // __STDCPP_DEFAULT_NEW_ALIGNMENT__.
  void* take() {
    if (spare_.empty()) return ::operator new(block_bytes_);
    void* block = spare_.back();
    spare_.pop_back();
    return block;
  }
  // A block from take() whose object has been destroyed. Never throws
  // (deleters call it): a block that cannot be kept is freed.
  void give_back(void* block) noexcept {
    try {
      spare_.push_back(block);
    } catch (...) {
      ::operator delete(block);
    }
  }
  // Frees the spare blocks (blocks in use stay theirs).
  void free_spares() {
    for (void* block : spare_) ::operator delete(block);
    spare_.clear();
    spare_.shrink_to_fit();
  }

 private:
  std::size_t block_bytes_;
  std::vector<void*> spare_;
};

}  // namespace safs
