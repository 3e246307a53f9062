#include "cli/option_suggestions.h"

#include <cstdio>
#include <string>
#include <vector>

#include "scenario/suggest.h"

namespace safs::cli {

namespace {

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> names;
  for (const CLI::Option* option : cmd.get_options()) {
    for (const std::string& n : option->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : option->get_snames()) names.push_back("-" + n);
  }
  return names;
}

}  // namespace

void suggest_options(const CLI::App& app, int argc, char** argv) {
  if (argc < 2) return;
  const std::string first = argv[1];
  std::vector<std::string> subcommands;
  const CLI::App* cmd = nullptr;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    subcommands.push_back(sub->get_name());
    if (sub->get_name() == first) cmd = sub;
  }
  if (cmd == nullptr) {
    if (first.rfind("-", 0) == 0) return;
    const std::string best = closest_match(first, subcommands);
    if (!best.empty())
      std::fprintf(stderr, "'%s': did you mean '%s'?\n", first.c_str(), best.c_str());
    return;
  }
  const std::vector<std::string> known = option_names(*cmd);
  for (int i = 2; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--") break;
    if (word.rfind("-", 0) != 0 || word.size() < 2) continue;
    word = word.substr(0, word.find('='));
    if (std::find(known.begin(), known.end(), word) != known.end()) continue;
    const std::string best = closest_match(word, known);
    if (!best.empty())
      std::fprintf(stderr, "'%s': did you mean '%s'?\n", word.c_str(), best.c_str());
  }
}

}  // namespace safs::cli
