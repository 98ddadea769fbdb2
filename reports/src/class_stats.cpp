#include "class_stats.h"

#include <algorithm>
#include <cmath>

namespace reports {
namespace {

double median_of(const std::vector<double>& sorted) {
  if (sorted.empty()) return 0;
  const size_t n = sorted.size();
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

}  // namespace

int bin_of(double score, double max) {
  if (max <= 0 || score >= max) return kBins - 1;
  const int b = static_cast<int>(std::floor(score / max * (kBins - 1)));
  return std::clamp(b, 0, kBins - 2);
}

double rounded(double v) { return std::round(v * 1000) / 1000; }

ExerciseStats exercise_stats(const ClassResults& c, const ClassExercise& e) {
  ExerciseStats s;
  for (const char* v : {"passed", "failed", "compile_error", "runtime_error", "internal_error"}) s.verdicts[v] = 0;
  for (const auto& st : c.students)
    if (const ClassEntry* x = c.find(st, e.id); held(x)) {
      ++s.held;  // no score yet: counted apart, in no statistic
      s.verdicts[grader::name(x->verdict)] = s.verdicts.value(grader::name(x->verdict), 0) + 1;
    } else if (x) {
      s.scores.push_back(x->score);
      s.verdicts[grader::name(x->verdict)] = s.verdicts.value(grader::name(x->verdict), 0) + 1;
      ++s.statuses[gradebook_status(x)];
      ++s.histogram[static_cast<size_t>(bin_of(x->score, e.max_score))];
    }
  s.missing = c.students.size() - s.scores.size() - s.held;
  std::sort(s.scores.begin(), s.scores.end());
  s.mean = mean_of(s.scores);
  s.median = median_of(s.scores);
  return s;
}

TotalStats total_stats(const ClassResults& c) {
  TotalStats t;
  for (const auto& st : c.students) {
    // A student who handed in nothing is listed apart, not counted as a 0;
    // so is one whose total waits on a held file.
    if (c.submitted_nothing(st) || c.any_held(st)) continue;
    double total = 0;
    for (const auto& e : c.exercises)
      if (const ClassEntry* x = c.find(st, e.id)) total += x->score;
    t.totals.push_back(total);
    ++t.histogram[static_cast<size_t>(bin_of(total, c.max_total()))];
  }
  std::sort(t.totals.begin(), t.totals.end());
  t.mean = mean_of(t.totals);
  t.median = median_of(t.totals);
  return t;
}

std::map<std::string, int> class_fences(const ClassResults& c) {
  std::map<std::string, int> fences;
  for (const auto& [key, x] : c.entries)
    if (!x.isolation.empty()) ++fences[x.isolation];
  return fences;
}

std::vector<FailedCheck> most_failed(const ClassResults& c) {
  std::vector<FailedCheck> all;
  for (const auto& e : c.exercises) {
    std::vector<FailedCheck> here;  // in the order the first student failing each lists it
    for (const auto& st : c.students) {
      const ClassEntry* x = c.find(st, e.id);
      if (!x) continue;
      for (const auto& k : x->checks) {
        if (k.status != "failed") continue;
        auto it = std::find_if(here.begin(), here.end(), [&](const FailedCheck& f) { return f.check == k.id; });
        if (it == here.end()) {
          here.push_back({e.id, k.id, k.name, {}});
          it = here.end() - 1;
        }
        it->students.push_back(st);
      }
    }
    all.insert(all.end(), here.begin(), here.end());
  }
  std::stable_sort(all.begin(), all.end(),
                   [](const FailedCheck& a, const FailedCheck& b) { return a.students.size() > b.students.size(); });
  if (all.size() > kMostFailed) all.resize(kMostFailed);
  return all;
}

}  // namespace reports
