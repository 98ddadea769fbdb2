// `grade batch` and `grade merge`: a whole class at once. Submissions are
// SUBMISSIONS/<student>/<exercise>.cpp; results go to OUT/students/<student>/
// <exercise>/ (the reports of one `grade` run, then a .key file written last),
// and the class's files to OUT: gradebook.csv, checks.csv, summary.json,
// summary.html and batch.json (what merge needs).
//
// Resumable: a result whose .key matches (the same submission, rubric,
// solution and grader) is not graded again, so a run interrupted anywhere
// continues where it stopped. Identical submissions are graded once. The
// class's files are rebuilt from what is on disk, in sorted order, so they
// do not depend on --jobs, on the order of grading, or on interruptions.
#pragma once
#include <ostream>
#include <functional>
#include <string>
#include <vector>

#include "grade/console.h"
#include "course/course.h"
#include "grade/grade.h"

namespace grader {

struct BatchOptions {
  std::string submissions, out;
  std::vector<std::string> exercises;  // empty: every exercise of the course found in the submissions
  int jobs = 1;
  bool regrade = false;
  int similarity = 0;  // --similarity: flag pairs sharing at least this percent (0: off)
  int shard = 1, shards = 1;  // grade the students of shard `shard` of `shards` (1-based)
  bool live_progress = false;  // a redrawn bar (a terminal), else a line now and then
  std::string layout = "auto";   // --layout: how SUBMISSIONS is laid out (layouts.h)
  std::string roster;            // --roster FILE: the class's list (roster.h), or ""
  bool bom = false;              // --bom: CSV files start with a UTF-8 byte order mark
  // --lms-assignment: canvas.csv's assignment column (empty: the roster's one
  // column named as Canvas names assignments, else "gradlab").
  std::string lms_assignment;
  bool accept_points_mismatch = false;  // export canvas.csv even when its points possible differ
};

// Runs fn(0) ... fn(n - 1) on `jobs` threads (this one included).
void parallel_for(size_t n, int jobs, const std::function<void(size_t)>& fn);

// Returns the exit code: 0 when every submission was graded (whatever its
// verdict), 1 when canvas.csv was not written because the roster's points
// possible differ from the rubrics' total, 70 when some submission could
// not be graded (the grader's fault, said per student).
int run_batch(const Course& course, const GradeRequest& base, const BatchOptions& opt, std::ostream& log);

// Combines the OUT folders of shards into `out`: their students' results and
// one gradebook and summary, as one unsharded run would have written them.
// Refuses (std::invalid_argument) a set of shards with one missing, unless
// `allow_partial`: then the summary says which are missing.
int merge_batches(const std::vector<std::string>& inputs, const std::string& out, bool allow_partial, std::ostream& log);

// "2/5" -> {2, 5}; throws std::invalid_argument on anything else.
std::pair<int, int> parse_shard(const std::string& s);

// Which shard (1-based) a student belongs to: a hash of the name, so it does
// not change when other students are added.
int shard_of(const std::string& student, int shards);

}  // namespace grader
