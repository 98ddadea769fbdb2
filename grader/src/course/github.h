// What `grade --github` adds inside a GitHub Actions job: workflow commands
// that put the verdict on the student's own lines in the pull request and
// commit views (`::error file=...,line=...::`), and the job summary
// ($GITHUB_STEP_SUMMARY) in Markdown: the score and each check.
#pragma once
#include <string>

#include "reports/result.h"

namespace grader {

// One workflow command per line: the first compiler errors at their lines,
// an escaped exception at its line, and each failed check on the file.
// `source` is the student's file's text (for errors GCC found in a header).
std::string github_annotations(const Result& r, const std::string& source);

// The job summary: the verdict, the score, a table of the checks.
std::string github_summary(const Result& r);

}  // namespace grader
