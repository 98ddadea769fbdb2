#pragma once
// Scores nobody changes silently: what a batch grade depends on, part by part
// (the grader, the rubric, the reference solution, its facts, the student's
// file), kept beside each result; on the next run, every score that moved is
// listed with the parts that differ, in the terminal and in the summaries.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "reports/gradebook.h"

namespace grader {

// The parts' fingerprints, in the order a change names them.
using GradeParts = std::vector<std::pair<std::string, std::string>>;  // (part, sha256)

// A result as an earlier run left it: its score, gradebook verdict and parts.
struct Before {
  double score = 0;
  std::string status;
  GradeParts parts;  // empty when that run kept none (an older gradlab)
};

// Reads what an earlier run left in a student's folder for one exercise
// (report.json and the parts file); nothing when there is no result.
std::optional<Before> read_before(const std::string& dir);
// Keeps the parts beside a result just written.
std::string write_parts(const std::string& dir, const GradeParts& parts);

// The scores of `now` that differ from `before`, in student then exercise
// order; a result that is gone is a change too. `regraded`: the run was
// asked to grade everything again (a change with no differing part is then
// put down to that).
std::vector<reports::ScoreChange> score_changes(
    const std::map<std::pair<std::string, std::string>, Before>& before,
    const std::map<std::pair<std::string, std::string>, GradeParts>& parts_now, const reports::ClassResults& now,
    bool regraded);

}  // namespace grader
