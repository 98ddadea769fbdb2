#include "course/personalise.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "common/exit_codes.h"
#include "judge/facts.h"
#include "common/files.h"
#include "judge/variants.h"

namespace grader {
namespace fs = std::filesystem;

int variant_count(const Course& course) {
  const std::string path = course.rubric_dir() + "/variants.json";
  if (!fs::exists(path)) return 0;
  const json doc = read_json_file(path);
  if (!doc.is_object() || !doc.contains("count") || !doc["count"].is_number_integer() || doc["count"].get<int>() < 0)
    throw std::runtime_error(path + ": must be {\"count\": N}, the number of variants the course hands out");
  return doc["count"].get<int>();
}

std::string variant_key(const std::string& email_or_login) {
  std::string s = email_or_login;
  s.erase(0, s.find_first_not_of(" \t\r\n"));
  s.erase(s.find_last_not_of(" \t\r\n") + 1);
  return ascii_lower(s);
}

int student_variant(const Course& course, const std::string& key) {
  const std::string k = variant_key(key);
  return k.empty() ? 0 : variant_for(k, variant_count(course));
}

json reference_facts(const Course& course, const std::string& exercise, const Rubric& rubric, int v,
                     const GradeRequest& base) {
  GradeRequest req = base;
  req.variant = v;
  course.set_reference(exercise, req);
  std::string why;
  auto recorded = read_facts(req.facts, rubric, solution_file_key(req.solution), why, v);
  if (recorded) return *recorded;
  if (course.is_release()) throw std::runtime_error(why + ". Ask your instructor for a release with this variant.");
  return run_reference(rubric, req);
}

int personalise(std::ostream& os, const Course& course, const GradeRequest& base, const std::string& who, int variant,
                const Style& st) {
  const int count = variant_count(course);
  if (variant < 0 && count == 0) {
    os << "grade personalise: this course gives everyone the lesson's numbers (it has no variants.json); "
          "there is nothing to change\n";
    return kExitUsage;
  }
  const int v = variant >= 0 ? variant : student_variant(course, who);
  int changed = 0, problems = 0;
  for (const auto& e : course.exercises()) {
    const Rubric rubric = load_rubric(course.rubric_path(e));
    if (rubric.variants.empty()) continue;
    const std::string file = find_submission(course, e);
    try {
      if (v > variant_capacity(rubric)) throw VariantError("it has " + std::to_string(variant_capacity(rubric)) + " variants");
      const json given = given_at(rubric, v);
      const auto source = read_file(file);
      if (!source) throw std::runtime_error("cannot read " + file);
      const std::string text = starter_at(*source, rubric, v, given, reference_facts(course, e, rubric, v, base));
      if (text != *source) {
        const std::string err = write_file_atomic(file, text);
        if (!err.empty()) throw std::runtime_error(err);
        ++changed;
      }
      os << st.green() << "✓ " << st.reset() << file << ": " << given_text(given) << " (variant " << v << ")\n";
    } catch (const std::exception& ex) {
      os << st.red() << "✗ " << st.reset() << file << ": " << ex.what() << "\n";
      ++problems;
    }
  }
  if (problems) return kExitFailed;
  os << (changed ? "Your numbers are in the files' statements; `./grade` grades at them." : "Nothing to change.") << "\n";
  return kExitPassed;
}

}  // namespace grader
