// Big-endian (network order) writing and bounds-checked reading of the
// fixed-width fields of the control protocol. The reader never reads past its
// span: a short read sets a flag instead, so a decoder checks once at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace safs::runtime {

class ByteWriter {
 public:
  explicit ByteWriter(std::vector<std::uint8_t>& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void i64(std::int64_t v) { u64(static_cast<std::uint64_t>(v)); }
  void bytes(std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); }
  // Overwrites a u32 written earlier at `at` (a length known only later).
  void patch_u32(std::size_t at, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) out_[at + i] = static_cast<std::uint8_t>(v >> (24 - 8 * i));
  }
  std::size_t size() const { return out_.size(); }

 private:
  void put(std::uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t>& out_;
};

class ByteReader {
 public:
  explicit ByteReader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  std::int64_t i64() { return static_cast<std::int64_t>(get(8)); }
  std::string string(std::size_t n) {
    if (n > remaining()) {
      short_ = true;
      pos_ = in_.size();
      return {};
    }
    std::string s(reinterpret_cast<const char*>(in_.data() + pos_), n);
    pos_ += n;
    return s;
  }
  std::size_t remaining() const { return in_.size() - pos_; }
  bool short_read() const { return short_; }

 private:
  std::uint64_t get(std::size_t width) {
    if (width > remaining()) {
      short_ = true;
      pos_ = in_.size();
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i) v = (v << 8) | in_[pos_ + i];
    pos_ += width;
    return v;
  }
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool short_ = false;
};

}  // namespace safs::runtime
