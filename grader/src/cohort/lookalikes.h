// Student names that only look different: "alice", "Alice", "al\u200Bice"
// (a zero-width space), "аlice" (a Cyrillic а), "ａｌｉｃｅ" (full width).
// Without a roster, a class's folder names are all there is to tell
// students apart, and two of these may be one person who handed in twice,
// or someone posing as a classmate. They are flagged for a person to look
// at, never merged.
//
// The comparison is Unicode's own (ICU): NFKC with case folding, which
// also drops default-ignorable characters, then the TR39 confusable
// skeleton, which maps each letter to the prototype it is mistaken for.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace grader {

// The name as it reads: equal for names a reader would take for one another.
std::string name_skeleton(std::string_view utf8);

// The names that read the same as another, in groups of two or more (each
// group in the names' order, groups by their first member).
std::vector<std::vector<std::string>> lookalike_groups(const std::vector<std::string>& names);

}  // namespace grader
