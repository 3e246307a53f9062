// The "args" object of a trace event, rendered as JSON text as it is built,
// with fixed number formats so the same values always give the same bytes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace safs::trace {

class TraceArgs {
 public:
  TraceArgs& add(std::string_view key, std::int64_t value);
  TraceArgs& add(std::string_view key, std::uint64_t value);
  TraceArgs& add(std::string_view key, int value) { return add(key, std::int64_t{value}); }
  TraceArgs& add(std::string_view key, std::uint32_t value) {
    return add(key, std::uint64_t{value});
  }
  TraceArgs& add(std::string_view key, bool value);
  TraceArgs& add(std::string_view key, std::string_view value);
  TraceArgs& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  // A real number with `decimals` digits after the point.
  TraceArgs& add_fixed(std::string_view key, double value, int decimals);

  bool empty() const { return body_.empty(); }
  std::string json() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view name);
  std::string body_;  // "k":v,"k":v without the braces
};

// `text` as a JSON string literal, quotes included.
std::string json_string(std::string_view text);

}  // namespace safs::trace
