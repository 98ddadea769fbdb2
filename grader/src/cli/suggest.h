// "Did you mean": the known word closest to a mistyped one (exercse3 →
// exercise3, --jnuit → --junit), or "" when none is close enough to be the
// likely intent.
#pragma once
#include <string>
#include <vector>

namespace grader {

// Edits (insert, delete, replace, swap two neighbours) between a and b.
size_t edit_distance(const std::string& a, const std::string& b);

std::string closest(const std::string& word, const std::vector<std::string>& known);

}  // namespace grader
