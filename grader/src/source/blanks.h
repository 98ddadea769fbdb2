// The blanks of a starter file: the regions between "// START CODE HERE" and
// "// END CODE HERE" that a student fills in. Whether a blank is still empty
// is read from its content alone, never from the file's path: comments and
// layout count as nothing, code counts as written, and code the course's
// starter already held there (a placeholder such as `return {};`) counts as
// nothing too. A file whose blanks are all empty is an untouched starter:
// its grade is one short message saying what goes where, not a list of
// every check failing.
//
// The starter's side is recorded with the facts (`grade record`), because
// the file the student edits is the starter itself: it cannot be its own
// reference.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace grader {

struct Blank {
  int start_line = 0, end_line = 0;  // the marker lines, from 1 (end_line 0: the END marker is gone)
  std::string code;                  // its tokens, one blank between each: no comments, no layout
  std::vector<std::pair<int, std::string>> comments;  // its // comments: line, text after the slashes, trimmed
};

std::vector<Blank> find_blanks(const std::string& source);

// What the course's starter holds in each blank: its code (placeholders)
// and its comments (what to write there).
struct StarterBlanks {
  struct One {
    std::string code;
    std::vector<std::string> prompts;
  };
  std::vector<One> blanks;
};

// The record kept in the facts: {"sha256": the starter's, "blanks": [{"code", "prompts"}]}.
nlohmann::ordered_json starter_record(const std::string& starter_source);
// The record read back; nullopt when it is missing or malformed.
std::optional<StarterBlanks> read_starter_record(const nlohmann::ordered_json& record);

// Which of the file's blanks are still empty: no code, or only the code the
// starter held in the same blank. `starter` may be null (not recorded): then
// only a blank without code is empty.
std::vector<bool> empty_blanks(const std::vector<Blank>& blanks, const StarterBlanks* starter);

// Whether the file has blanks and every one is empty. A file with a
// different number of blanks than the starter was edited (a marker moved or
// removed): it is graded, not called untouched.
bool untouched(const std::vector<Blank>& blanks, const StarterBlanks* starter);

// What to write in a blank, at the student's lines: the starter's prompts
// where the file still has them (a comment the student wrote, such as a
// line commented out, is no prompt); all of its comments when the starter
// is not recorded.
std::vector<std::pair<int, std::string>> prompts(const Blank& blank, const StarterBlanks::One* starter);

}  // namespace grader
