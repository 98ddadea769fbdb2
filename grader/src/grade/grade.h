// Grading one submission: build the student's file and the reference
// solution (in parallel, both cached), run each in the sandbox, turn what
// came back into a verdict, and score the checks.
#pragma once
#include <stdexcept>
#include <string>

#include "reports/result.h"
#include "judge/rubric.h"

namespace grader {

// Something the grader itself could not do (the reference does not build, the
// cache is not writable): exit code 70, never blamed on the student.
struct InternalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GradeRequest {
  std::string submission;  // the student's file, as it should be shown
  std::string solution;    // the reference solution ("" or missing in a student release)
  std::string facts;       // its recorded facts (facts.h): used instead of a reference build when they hold
  std::string cache_dir;
  bool isolate = true;
  std::string engine = "gradlab";  // the student's build: "gradlab" or "libtorch" (the reference always uses gradlab)
  std::string device = "cpu";      // "cuda": the student's factories default to the GPU (the reference stays on the CPU)
  int variant = 0;                 // the student's numbers (variants.h): 0, the lesson's; `facts` must be this variant's
};

Result grade(const Rubric& rubric, const GradeRequest& req);

// When and where a grade is made, as reports give them: "2026-11-22T09:41:07Z"
// (UTC) and this machine's name ("" when it has none).
std::string utc_now();
std::string host_name();

// The reference solution's snapshot, built and run now (through the compile
// cache), never from recorded facts: what `grade record` keeps and what
// `grade check` holds recorded facts against.
// At req.variant's numbers.
json run_reference(const Rubric& rubric, const GradeRequest& req);

}  // namespace grader
