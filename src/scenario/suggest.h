// "Did you mean": the known word closest to a mistyped one, by edit distance.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace safs {

// Levenshtein distance (insertions, deletions, substitutions).
std::size_t edit_distance(const std::string& a, const std::string& b);

// The candidate closest to `word`, or empty when none is within
// `max_distance` edits (farther ones are more noise than help).
std::string closest_match(const std::string& word, const std::vector<std::string>& candidates,
                          std::size_t max_distance = 3);

// "; did you mean 'x'?" for the closest candidate, or empty.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace safs
