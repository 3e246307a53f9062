// Transport parameters: each transport publishes a table of its knobs (unit,
// default, range, meaning, source). The scenario parser validates
// [transport.NAME] against it, and docs/scenario-format.md is generated from it.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace safs {

struct ParamSpec {
  std::string_view key;
  std::string_view unit;
  double default_value;
  double min_value;
  double max_value;
  bool integer;
  std::string_view doc;  // meaning and the source of the default
};

class TransportParams {
 public:
  explicit TransportParams(const std::vector<ParamSpec>* specs) : specs_(specs) {}
  void set(std::string_view key, double value) { values_[std::string(key)] = value; }
  // The configured value, or the table's default. `key` must be in the table.
  double get(std::string_view key) const;

 private:
  const std::vector<ParamSpec>* specs_;
  std::map<std::string, double, std::less<>> values_;
};

}  // namespace safs
