// PrairieLearn's questions for a release (`grade release`): one folder per
// exercise, ready to copy into a PrairieLearn course's questions/. Each
// shows the student the starter at their own variant and hands the grader
// that variant's number: PrairieLearn gives an external grader no identity,
// so the question itself says which numbers its copy shows.
#pragma once
#include <filesystem>
#include <functional>
#include <string>

#include "course/course.h"

namespace grader {

// Writes DIR/questions/EXERCISE/{info.json, question.html, server.py,
// starters/EXERCISE.vK.cpp} for each of the course's exercises, K = 0 (the
// lesson's numbers) to `count` where the exercise has variants. `facts_at`
// gives the reference's facts at a variant (for the statement's templates).
void write_pl_questions(const Course& course, const std::filesystem::path& dir, int count,
                        const std::function<json(const std::string& exercise, int variant)>& facts_at);

}  // namespace grader
