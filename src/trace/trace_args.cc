#include "trace/trace_args.h"

#include <cmath>
#include <cstdio>

namespace safs::trace {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void TraceArgs::key(std::string_view name) {
  if (!body_.empty()) body_ += ',';
  body_ += json_string(name);
  body_ += ':';
}

TraceArgs& TraceArgs::add(std::string_view name, std::int64_t value) {
  key(name);
  body_ += std::to_string(value);
  return *this;
}

TraceArgs& TraceArgs::add(std::string_view name, std::uint64_t value) {
  key(name);
  body_ += std::to_string(value);
  return *this;
}

TraceArgs& TraceArgs::add(std::string_view name, bool value) {
  key(name);
  body_ += value ? "true" : "false";
  return *this;
}

TraceArgs& TraceArgs::add(std::string_view name, std::string_view value) {
  key(name);
  body_ += json_string(value);
  return *this;
}

TraceArgs& TraceArgs::add_fixed(std::string_view name, double value, int decimals) {
  key(name);
  if (!std::isfinite(value)) {  // JSON has no infinities
    body_ += "null";
    return *this;
  }
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  body_ += text;
  return *this;
}

}  // namespace safs::trace
