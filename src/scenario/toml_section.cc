#include "scenario/toml_section.h"

#include <stdexcept>

namespace safs {

std::optional<Value> TomlSection::get(std::string_view key, ValueType type) const {
  const toml::node* node = table_ != nullptr ? table_->get(key) : nullptr;
  if (node == nullptr) return std::nullopt;
  switch (type) {
    case ValueType::kInteger:
      if (node->is_integer()) return node->as_integer()->get();
      break;
    case ValueType::kFloat:
      if (node->is_integer()) return static_cast<double>(node->as_integer()->get());
      if (node->is_floating_point()) return node->as_floating_point()->get();
      break;
    case ValueType::kString:
      if (node->is_string()) return node->as_string()->get();
      break;
    case ValueType::kBoolean:
      if (node->is_boolean()) return node->as_boolean()->get();
      if (node->is_integer()) return node->as_integer()->get() != 0;
      break;
    case ValueType::kHostList: {
      std::vector<std::int64_t> hosts;
      if (const toml::array* list = node->as_array()) {
        for (const toml::node& item : *list) hosts.push_back(item.as_integer()->get());
      }
      return hosts;
    }
    case ValueType::kStringList: {
      std::vector<std::string> texts;
      if (const toml::array* list = node->as_array()) {
        for (const toml::node& item : *list) texts.push_back(item.as_string()->get());
      }
      return texts;
    }
  }
  // Present but of another type: only a key that was not validated as `type`.
  return Value{};
}

std::vector<std::unique_ptr<SectionReader>> TomlSection::tables(std::string_view key) const {
  std::vector<std::unique_ptr<SectionReader>> entries;
  const toml::array* array = table_ != nullptr ? table_->get_as<toml::array>(key) : nullptr;
  for (std::size_t i = 0; array != nullptr && i < array->size(); ++i) {
    // Validation has checked that every entry is a table.
    entries.push_back(std::make_unique<TomlSection>(
        (*array)[i].as_table(), shown_ + "." + std::string(key) + "[" + std::to_string(i) + "]",
        fail_));
  }
  return entries;
}

void TomlSection::fail_near(std::string_view key, std::string_view near,
                            const std::string& message) const {
  const toml::node* node = table_;
  for (const std::string_view k : {near, key}) {  // the key itself wins
    if (!k.empty() && table_ != nullptr && table_->get(k) != nullptr) node = table_->get(k);
  }
  fail_(node, key.empty() ? shown_ : shown_ + "." + std::string(key), message);
  throw std::logic_error("TomlSection: the fail callback returned");
}

}  // namespace safs
