// The course on disk: where rubrics, solutions, starter files, fixtures and
// reports live, and the commands that walk all of them (list, check).
#pragma once
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "grade/console.h"
#include "grade/grade.h"
#include "reports/writer.h"

namespace grader {

// A course's own tree holds solutions/ (rubrics, reference solutions and
// their recorded facts); a student release (release.h) holds rubrics/
// instead: the public rubrics and the facts their visible checks read.
struct Course {
  std::string root;

  bool is_release() const;       // no solutions/, only rubrics/
  std::string rubric_dir() const;  // solutions/ or rubrics/
  std::string rubric_path(const std::string& exercise) const;
  std::string solution_path(const std::string& exercise) const;
  // NAME.facts.json beside the rubric; a variant's in variants/NAME.vN.facts.json
  std::string facts_path(const std::string& exercise, int variant = 0) const;
  std::string starter_path(const std::string& exercise) const;  // exercises/NAME.cpp
  // The reference an exercise is graded against (at req.variant), filled into a request.
  void set_reference(const std::string& exercise, GradeRequest& req) const;
  // Exercises with a rubric, in numeric order (exercise2 before exercise10).
  std::vector<std::string> exercises() const;
};

// Exercise names in the course's order: exercise2 before exercise10.
bool numeric_less(const std::string& a, const std::string& b);

// The course this grader was built from.
Course installed_course();

// The student's file for an exercise when none was given: exercises/NAME.cpp
// or NAME.cpp in the current folder or above it, else the course's own
// starter file. Returned as the student would write it (relative when it is
// below the current folder).
std::string find_submission(const Course& course, const std::string& exercise);

// Where reports go by default: gradlab-reports/NAME beside the exercises/
// folder the file is in, else in the current folder.
std::string default_report_dir(const std::string& submission, const std::string& exercise);

// Writes each writer's file into `dir` (created if missing), atomically, so
// that an interrupted run never leaves half a report. Returns what went
// wrong, or "" when every file was written.
std::string write_reports(const std::string& dir, const Result& r,
                          const std::vector<std::unique_ptr<reports::Writer>>& writers);

// `grade list`: exercises, titles and the student's last result.
int list_exercises(std::ostream& os, const Course& course, const Style& st);

// `grade check`: every solution scores full marks, and every fixture under
// tests/fixtures/NAME/ gets exactly the verdict its .expect.json names.
// (check.cpp) Files are graded by `jobs` workers; the lines come in the course's order.
// Each exercise with variants is proven at `checked_variants` of them (its
// solution scores full marks there, a copied fixture does not).
// With `junit_dir`, also writes check-EXERCISE.xml there: a testcase per file.
int check_course(std::ostream& os, const Course& course, const GradeRequest& base, int jobs, int checked_variants,
                 const std::string& junit_dir, const Style& st);

// `grade record`: runs each solution and writes its facts beside its rubric.
int record_facts(std::ostream& os, const Course& course, const GradeRequest& base, const std::vector<std::string>& exercises,
                 const Style& st);

}  // namespace grader
