// `grade release --out DIR`: a course made ready to hand out. DIR/student/
// is a repository for students: the starters, the engine, the grader, the
// public rubrics (no hidden check) and the recorded facts their visible
// checks read; no solution, no fixture, no hidden check. Its `./grade`
// grades against those facts without any reference build.
#pragma once
#include <ostream>
#include <string>
#include <vector>

#include "grade/console.h"
#include "course/course.h"

namespace grader {

// The rubric a student sees: hidden checks and the diagnoses that name
// them left out, and their count and points said in "hidden_checks".
json public_rubric(const json& rubric);

// Lines of the solutions that carry an answer: not blank, not only
// punctuation, not a comment, and not in any starter (the starters' own
// lines are handed out anyway).
std::vector<std::string> answer_lines(const Course& course);

// Where a tree holds an answer line: "path:line: text" for each, in order.
std::vector<std::string> find_answers(const std::string& tree, const std::vector<std::string>& answers);

// Writes DIR/student/ and DIR/autograder/ (Gradescope's zip, PrairieLearn's
// image, GitHub Classroom's workflow, each with the full rubrics and facts
// but no solution). `assignment`, when given, is the exercises the
// autograders expect. Returns 0, else an exit code with the reason on `os`.
// `variants` > 0: the reference's facts at variants 1..variants of every
// exercise whose rubric has them go along (rubrics/variants/), and
// rubrics/variants.json says how many (personalise.h); the runs use `base`.
int release_course(std::ostream& os, const Course& course, const std::string& out,
                   const std::vector<std::string>& assignment, const GradeRequest& base, int variants, const Style& st);

}  // namespace grader
