// Statistics over a class's results, shared by summary.json and summary.html
// so that both always show the same numbers.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "reports/gradebook.h"

namespace reports {

// Ten bins of a tenth of the points each ([0, 10%) ... [90%, 100%)), and
// one of its own for full marks, so that a class's full marks stand apart.
inline constexpr int kBins = 11;
int bin_of(double score, double max);

struct ExerciseStats {
  std::vector<double> scores;  // of the submitted, ascending
  size_t missing = 0;          // students with no file for it
  size_t held = 0;             // files held for a person (shared with another student's): no score yet
  json verdicts = json::object();  // verdict -> count, in a fixed order
  std::map<std::string, int> statuses;  // gradebook_status -> count (missing apart)
  double mean = 0, median = 0;
  std::vector<int> histogram = std::vector<int>(kBins, 0);
};
ExerciseStats exercise_stats(const ClassResults& c, const ClassExercise& e);

struct TotalStats {
  // One per student who handed in something (a missing exercise as 0), ascending.
  std::vector<double> totals;
  double mean = 0, median = 0;
  std::vector<int> histogram = std::vector<int>(kBins, 0);
};
TotalStats total_stats(const ClassResults& c);

// How many of the class's runs each fence held ("bubblewrap", "fallback").
std::map<std::string, int> class_fences(const ClassResults& c);

struct FailedCheck {
  std::string exercise, check, name;
  std::vector<std::string> students;  // sorted
};
// The checks failed by the most students, most first (ties: by exercise).
std::vector<FailedCheck> most_failed(const ClassResults& c);

// Three decimals, so that summary.json shows 12.333, not 12.333333333333334.
double rounded(double v);

}  // namespace reports
