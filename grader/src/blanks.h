// The blanks of a starter file: the regions between "// START CODE HERE" and
// "// END CODE HERE" that a student fills in. A file whose blanks all hold
// what the course's starter holds there (comments, and placeholders such as
// `return {};`) is an untouched starter: its grade is one short message
// saying what goes where, not a list of every check failing.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace grader {

struct Blank {
  int start_line = 0, end_line = 0;  // the marker lines, from 1
  std::vector<std::string> code;     // the lines inside that are not comments, trimmed
  std::vector<std::pair<int, std::string>> prompts;  // the comments inside: what to write
};

std::vector<Blank> find_blanks(const std::string& source);

// Whether the file has blanks and each holds the same code as the starter's
// (no code at all when the starter is not known).
bool untouched(const std::vector<Blank>& blanks, const std::vector<Blank>& starter);

}  // namespace grader
