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

// `overrides` are "dotted.key=value" strings (the CLI's --set); the value is
// read as TOML (a bare word is taken as a string). `warnings`, if given,
// receives what was accepted but probably not meant (an override for a
// transport the run does not use).
ExperimentConfig load_scenario(const std::string& path,
                               const std::vector<std::string>& overrides = {},
                               std::vector<std::string>* warnings = nullptr);

// The same from TOML text; `name` is used in messages in place of a file name.
ExperimentConfig parse_scenario(const std::string& text, const std::string& name,
                                const std::vector<std::string>& overrides = {},
                                std::vector<std::string>* warnings = nullptr);

}  // namespace safs
