// `grade batch --similarity`: pairs of submissions to one exercise that
// share most of their code, found by Debian's similarity-tester (sim_c++,
// which compares token streams, so renamed variables do not hide a copy)
// after the lines every student was given (the starter's) and the lines a
// correct answer has anyway (the reference solution's) are taken out. A flag
// for a person to look at, never a verdict: scores do not change.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "reports/gradebook.h"

namespace grader {

struct Submitted {
  std::string student, text;
};

// sim_c++ runs in the fence, like the compilers: it reads students' text.
// Returns the pairs at or above `threshold` percent, exercise by exercise,
// most similar first; `error` says why none could be computed (sim_c++
// missing, the fence failed).
std::vector<reports::SimilarPair> similar_pairs(const std::map<std::string, std::vector<Submitted>>& by_exercise,
                                                const std::map<std::string, std::string>& given, int threshold,
                                                bool isolate, std::string& error);

// The text with the lines of `given` left out (compared after blanks are
// collapsed): what the student wrote beyond it.
std::string without_given(const std::string& text, const std::string& given);

}  // namespace grader
