// A SectionReader over one TOML table of a scenario file: [topology], one
// [[flows]] entry, [transport.safs]. Messages name the file and line of the
// key (or of the table when the key is absent).
#pragma once

#include <functional>
#include <string>

#include <toml++/toml.h>

#include "options/section_reader.h"

namespace safs {

class TomlSection final : public SectionReader {
 public:
  // Reports `message` about `key` (shown as given) at `node`; must throw.
  using Fail = std::function<void(const toml::node* node, const std::string& key,
                                  const std::string& message)>;
  // `table` may be null (the file has no such section); `shown` names the
  // section in messages ("flows[2]", "topology").
  TomlSection(const toml::table* table, std::string shown, Fail fail)
      : table_(table), shown_(std::move(shown)), fail_(std::move(fail)) {}

  std::optional<Value> get(std::string_view key, ValueType type) const override;
  std::vector<std::unique_ptr<SectionReader>> tables(std::string_view key) const override;
  [[noreturn]] void fail_near(std::string_view key, std::string_view near,
                              const std::string& message) const override;

  const toml::table* table() const { return table_; }

 private:
  const toml::table* table_;
  std::string shown_;
  Fail fail_;
};

}  // namespace safs
