// Reads a scenario file (TOML) into an ExperimentConfig. Every key is checked
// against the schema (type, unit range, allowed values) and the whole file for
// consistency (hosts in range, no flow to itself, ...). Problems raise a
// ScenarioError whose message names the file, the line and the key.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "experiment/experiment.h"

namespace safs {

class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What the loader reports beside the configuration.
struct ScenarioNotes {
  // Accepted but probably not meant (an override for a transport the run
  // does not use).
  std::vector<std::string> warnings;
  // The file with every override applied, as TOML (keys sorted): what the
  // run was asked to simulate, for provenance.
  std::string effective_toml;
};

// `overrides` are "dotted.key=value" strings (the CLI's --set); the value is
// read as TOML (a bare word is taken as a string).
ExperimentConfig load_scenario(const std::string& path,
                               const std::vector<std::string>& overrides = {},
                               ScenarioNotes* notes = nullptr);

// The same from TOML text; `name` is used in messages in place of a file name.
ExperimentConfig parse_scenario(const std::string& text, const std::string& name,
                                const std::vector<std::string>& overrides = {},
                                ScenarioNotes* notes = nullptr);

}  // namespace safs
