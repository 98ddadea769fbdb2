// `grade autograde SUBMISSION --out RESULTS`: what an autograding platform
// runs for one student's submission. It finds the exercise files wherever
// the platform put them (any subfolder; Exercise3.cpp as well as
// exercise3.cpp; no link followed), grades each with the course's full
// rubric in the fence, and writes the platform's results file: Gradescope's
// results.json, or PrairieLearn's.
#pragma once
#include <ostream>
#include <string>

#include "cohort/chooser.h"
#include <vector>

#include "course/course.h"

namespace grader {

enum class Platform { Gradescope, PrairieLearn };

struct AutogradeRequest {
  std::string submission;               // the folder the platform unpacked the submission into
  std::string out;                      // where results.json goes
  std::vector<std::string> exercises;   // the assignment's (a missing one scores 0); empty: whatever was submitted
  Platform platform = Platform::Gradescope;
  // Who submitted, for a course with variants (personalise.h): their e-mail
  // or login; empty, the lesson's numbers.
  std::string student;
  // Or the variant by number, as the platform chose it (PrairieLearn's
  // question gives it in its params): -1 for none.
  int variant = -1;
};

// The variant PrairieLearn's question chose for this student's copy of it:
// params.gradlab_variant in the job's data.json (the question's server.py
// sets it from PrairieLearn's own variant), -1 when there is none. PrairieLearn
// hands an external grader no identity, so this is the only way it knows.
int prairielearn_variant(const std::string& data_json_path);

// The submitter's e-mail in Gradescope's submission_metadata.json (its first
// user's; a group submission is graded at its first member's numbers), or
// "" when the file is missing or holds none.
std::string gradescope_submitter(const std::string& metadata_path);

// The exercise files of a submission folder, one per exercise as
// chooser.h takes them (any depth, inside archives, never through a link),
// and what was passed over, with why.
Chosen find_exercise_files(const std::string& folder, const std::vector<std::string>& exercises);

// Grades and writes the results file. Returns 0 when every file was graded
// (whatever the scores), 70 when the grader itself failed on one (the
// results file then says so, with that exercise at 0).
int autograde(std::ostream& log, const Course& course, const GradeRequest& base, const AutogradeRequest& req);

}  // namespace grader
