// Scoring: a pure function of the rubric, the student's snapshot and the
// reference's snapshot (both as the harness wrote them, plus "stdout").
#pragma once
#include <string>
#include <vector>

#include "reports/result.h"
#include "judge/rubric.h"

namespace grader {

// `stopped_at`: where an exception ended the run ("exercise3.cpp:15"), or
// "" when it ran to the end; the checks it kept from their facts then say
// "not reached" instead of a mistake.
std::vector<CheckResult> evaluate(const Rubric& rubric, const json& student, const json& reference,
                                  const std::string& stopped_at = "");

// A named tensor as a snapshot recorded it, or null.
const json* named(const json& snapshot, const std::string& name);

// The rubric's diagnoses applied to evaluated checks (diagnoses.cpp): a
// failed check whose mistake the facts recognise gets the hint naming it.
void diagnose(const Rubric& rubric, const json& student, std::vector<CheckResult>& results);

// Every check "not_run", for a program that never produced a snapshot.
std::vector<CheckResult> not_run(const Rubric& rubric, const std::string& why);

// Are two value lists (as the harness writes them) equal within tolerance?
bool close(const json& found, const json& expected, const Tolerance& tol);

// How much of a value or a graph a check shows before ending it in "…".
inline constexpr size_t kMaxShownText = 4096;

// A tensor's values as PyTorch would show their nesting: -12, [1, 2], [[1, 2], [3, 4]].
std::string format_values(const json& values, const json& shape);

// A backward graph as an expression: MulBackward0(AddBackward0(PowBackward0(x), y), z).
std::string graph_expression(const json& nodes);

struct GraphDiff {
  std::vector<std::string> differences;     // one sentence each, with where
  std::vector<std::string> student_nodes;   // ids of the student's nodes that differ
  std::vector<std::string> reference_nodes;
};
// Differences between a student's graph and the reference's; none when the
// two have one normal form (normal_form.h). The tensors objects are the
// documents' "tensors" (null when absent).
GraphDiff compare_graphs(const json& student, const json& reference, const Rubric& rubric,
                         const json& student_tensors = nullptr, const json& reference_tensors = nullptr);

// The graphs a report draws: those the rubric checks (with the reference's
// beside each failed one), then every named graph that no other contains.
inline constexpr size_t kMaxGraphViews = 8;
std::vector<GraphView> graph_views(const Rubric& rubric, const std::vector<CheckResult>& results, const json& student,
                                   const json& reference);

}  // namespace grader
