// One section of configuration (a TOML table, a Python dict, a --set list),
// seen through typed lookups. Knob tables and workload plug-ins read only
// through this interface, so they do not depend on any file format.
#pragma once

#include <concepts>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "options/key_spec.h"

namespace safs {

class SectionReader {
 public:
  virtual ~SectionReader() = default;
  // The value at `key` as `type` (an integer is given as a double for
  // kFloat, 0/1 as a bool for kBoolean), or nullopt when the key is absent.
  // The caller has validated the section against its keys.
  virtual std::optional<Value> get(std::string_view key, ValueType type) const = 0;
  bool has(std::string_view key) const { return get(key, ValueType::kString).has_value(); }
  // The tables of the array of tables `key` inside this section ([[graph.op]]
  // in [graph]), each seen through a reader whose messages name it
  // "section.key[i]"; empty when the key is absent or the reader has no
  // nested tables (MapReader).
  virtual std::vector<std::unique_ptr<SectionReader>> tables(std::string_view /*key*/) const {
    return {};
  }
  // Throws an error naming where `key` was given ("file:line: section.key:
  // message"); an empty key names the section itself.
  [[noreturn]] void fail(std::string_view key, const std::string& message) const {
    fail_near(key, key, message);
    throw std::logic_error("SectionReader::fail_near returned");  // it must throw
  }
  // The same, pointing at `near` when `key` itself is not given (a pair of
  // keys that disagree, one of them a default).
  [[noreturn]] virtual void fail_near(std::string_view key, std::string_view near,
                                      const std::string& message) const = 0;
};

// A value set by hand (a test, the Python API): any integer is taken as an
// integer, any floating-point number as a number.
struct Setting : Value {
  Setting() = default;
  Setting(const Value& v) : Value(v) {}              // NOLINT: implicit by design
  Setting(bool v) : Value(v) {}                      // NOLINT: implicit by design
  Setting(std::string v) : Value(std::move(v)) {}    // NOLINT: implicit by design
  Setting(const char* v) : Value(std::string(v)) {}  // NOLINT: implicit by design
  template <std::integral T>
  requires(!std::same_as<T, bool>) Setting(T v)
      : Value(static_cast<std::int64_t>(v)) {}  // NOLINT: implicit by design
  template <std::floating_point T>
  Setting(T v) : Value(static_cast<double>(v)) {}  // NOLINT: implicit by design
};

using Settings = std::map<std::string, Setting, std::less<>>;

// A section held as key -> value, for callers without a file (tests, the
// Python API). Numbers convert to the key's type when they can be exact (an
// integral double for an integer key, 0/1 for a boolean).
class MapReader final : public SectionReader {
 public:
  MapReader(std::string section, Settings values)
      : section_(std::move(section)), values_(std::move(values)) {}
  std::optional<Value> get(std::string_view key, ValueType type) const override {
    const auto it = values_.find(key);
    if (it == values_.end()) return std::nullopt;
    const Value& v = it->second;
    const auto* integer = std::get_if<std::int64_t>(&v);
    const auto* number = std::get_if<double>(&v);
    if (type == ValueType::kFloat && integer != nullptr) return static_cast<double>(*integer);
    if (type == ValueType::kInteger && number != nullptr) {
      const auto whole = static_cast<std::int64_t>(*number);
      if (static_cast<double>(whole) != *number) fail(key, "expected integer");
      return whole;
    }
    if (type == ValueType::kBoolean && integer != nullptr) {
      if (*integer != 0 && *integer != 1) fail(key, "expected boolean");
      return *integer != 0;
    }
    return v;
  }
  [[noreturn]] void fail_near(std::string_view key, std::string_view /*near*/,
                              const std::string& message) const override {
    throw std::invalid_argument(section_ + (key.empty() ? "" : "." + std::string(key)) + ": " +
                                message);
  }

 private:
  std::string section_;
  Settings values_;
};

}  // namespace safs
