// A binary heap of 32-bit ids that can remove or re-position any member in
// O(log n): each id's position in the heap is stored by the caller (the
// `Position` functor returns a reference to it), so no search is needed.
// pFabric uses it for its switch queue (smallest and largest rank) and for
// each host's shortest-remaining-first order over its flows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace safs {

// `Before(a, b)`: a belongs nearer the top than b (a strict weak order).
// `Position(id)`: a std::uint32_t& where the heap keeps id's index.
template <typename Before, typename Position>
class IndexHeap {
 public:
  static constexpr std::uint32_t kAbsent = std::numeric_limits<std::uint32_t>::max();

  IndexHeap(Before before, Position position) : before_(before), position_(position) {}

  bool empty() const { return items_.empty(); }
  std::size_t size() const { return items_.size(); }
  std::uint32_t top() const { return items_.front(); }
  // The members in heap order (for the rare linear scans).
  const std::vector<std::uint32_t>& items() const { return items_; }

  void push(std::uint32_t id) {
    items_.push_back(id);
    sift_up(items_.size() - 1);
  }
  void erase(std::uint32_t id) {
    const std::size_t i = position_(id);
    position_(id) = kAbsent;
    const std::uint32_t last = items_.back();
    items_.pop_back();
    if (i < items_.size()) {
      place(i, last);
      fix(i);
    }
  }
  // The key of `id` changed: restore the heap order around it.
  void update(std::uint32_t id) { fix(position_(id)); }

 private:
  void fix(std::size_t i) {
    if (!sift_up(i)) sift_down(i);
  }
  bool sift_up(std::size_t i) {
    const std::uint32_t id = items_[i];
    const std::size_t start = i;
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before_(id, items_[parent])) break;
      place(i, items_[parent]);
      i = parent;
    }
    place(i, id);
    return i != start;
  }
  void sift_down(std::size_t i) {
    const std::uint32_t id = items_[i];
    const std::size_t n = items_.size();
    while (true) {
      std::size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before_(items_[child + 1], items_[child])) ++child;
      if (!before_(items_[child], id)) break;
      place(i, items_[child]);
      i = child;
    }
    place(i, id);
  }
  void place(std::size_t i, std::uint32_t id) {
    items_[i] = id;
    position_(id) = static_cast<std::uint32_t>(i);
  }

  Before before_;
  Position position_;
  std::vector<std::uint32_t> items_;
};

}  // namespace safs
