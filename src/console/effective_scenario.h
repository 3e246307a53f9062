// What a run was asked to simulate: the scenario file's text plus the --set
// overrides (--transport and --seed included, as overrides). Its fingerprint
// names default output directories and lets a sweep tell whether a finished
// point was run with the scenario it would run now.
#pragma once

#include <string>
#include <vector>

namespace safs::console {

struct EffectiveScenario {
  std::string text_hash;               // of the scenario file's bytes
  std::vector<std::string> overrides;  // "section.key=value", in order

  EffectiveScenario() = default;
  EffectiveScenario(const std::string& file_text, std::vector<std::string> overrides_given);

  // 16 hex digits over the text hash and the overrides; stable across builds.
  std::string fingerprint() const;
};

// 16 hex digits of FNV-1a (64 bit): not cryptographic, just stable.
std::string stable_hash(const std::string& bytes);

// Empty when `was` and `now` ask for the same run; otherwise what differs, for
// a message: "topology.link_gbps: 10 before, 25 now".
std::string first_difference(const EffectiveScenario& was, const EffectiveScenario& now);

}  // namespace safs::console
