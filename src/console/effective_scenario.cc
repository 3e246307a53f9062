#include "console/effective_scenario.h"

#include <cstdint>
#include <cstdio>
#include <map>

namespace safs::console {

namespace {

// The value each key ends with: a later override of a key wins, as in the loader.
std::map<std::string, std::string> final_values(const std::vector<std::string>& overrides) {
  std::map<std::string, std::string> values;
  for (const std::string& o : overrides) {
    const std::size_t eq = o.find('=');
    values[o.substr(0, eq)] = eq == std::string::npos ? "" : o.substr(eq + 1);
  }
  return values;
}

}  // namespace

std::string stable_hash(const std::string& bytes) {
  // FNV-1a offset basis and prime (Fowler, Noll, Vo; IETF draft-eastlake-fnv).
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : bytes) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(h));
  return text;
}

EffectiveScenario::EffectiveScenario(const std::string& file_text,
                                     std::vector<std::string> overrides_given)
    : text_hash(stable_hash(file_text)), overrides(std::move(overrides_given)) {}

std::string EffectiveScenario::fingerprint() const {
  std::string all = text_hash;
  for (const auto& [key, value] : final_values(overrides)) all += "\n" + key + "=" + value;
  return stable_hash(all);
}

std::string first_difference(const EffectiveScenario& was, const EffectiveScenario& now) {
  if (was.text_hash != now.text_hash) return "the scenario file's text changed";
  const auto before = final_values(was.overrides);
  const auto after = final_values(now.overrides);
  for (const auto& [key, value] : after) {
    const auto it = before.find(key);
    if (it == before.end()) return key + ": not set before, " + value + " now";
    if (it->second != value) return key + ": " + it->second + " before, " + value + " now";
  }
  for (const auto& [key, value] : before) {
    if (!after.contains(key)) return key + ": " + value + " before, not set now";
  }
  return "";
}

}  // namespace safs::console
