#include "autograde.h"
#include "exit_codes.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include "checks.h"
#include "files.h"
#include "intake.h"
#include "personalise.h"
#include "reports/writer.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

// What a student reads for an exercise that produced no grade: every check at 0.
Result unjudged(const Rubric& rubric, Verdict verdict, const std::string& why) {
  Result r;
  r.exercise = rubric.exercise, r.title = rubric.title, r.max_score = rubric.max_points();
  r.verdict = verdict;
  r.compile.diagnostics = why;
  r.checks = not_run(rubric, why);
  return r;
}

}  // namespace

std::string gradescope_submitter(const std::string& metadata_path) {
  const auto text = read_file(metadata_path);
  if (!text) return "";
  const json doc = json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc.contains("users") || !doc["users"].is_array() || doc["users"].empty()) return "";
  const json& u = doc["users"][0];
  for (const char* k : {"email", "sid"})
    if (u.is_object() && u.contains(k) && u[k].is_string() && !u[k].get<std::string>().empty()) return u[k];
  return "";
}

int prairielearn_variant(const std::string& data_json_path) {
  const auto text = read_file(data_json_path);
  if (!text) return -1;
  const json doc = json::parse(*text, nullptr, false);
  if (!doc.is_object() || !doc.contains("params") || !doc["params"].is_object()) return -1;
  const json& v = doc["params"].value("gradlab_variant", json());
  return v.is_number_integer() && v.get<int64_t>() >= 0 && v.get<int64_t>() <= 1000000 ? static_cast<int>(v.get<int64_t>()) : -1;
}

std::vector<std::pair<std::string, std::string>> find_exercise_files(const std::string& folder,
                                                                     const std::vector<std::string>& exercises) {
  std::map<std::string, std::pair<size_t, std::string>> best;  // exercise -> (depth, path)
  std::error_code ec;
  // The iterator does not descend into linked folders; linked files are skipped below.
  for (auto it = fs::recursive_directory_iterator(folder, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file(ec) || it->is_symlink(ec)) continue;
    const std::string e = exercise_named(it->path().filename().string(), exercises);
    if (e.empty()) continue;
    const std::pair<size_t, std::string> here{static_cast<size_t>(it.depth()), it->path().string()};
    auto [at, fresh] = best.emplace(e, here);
    if (!fresh && here < at->second) at->second = here;
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& e : exercises)
    if (best.count(e)) out.emplace_back(e, best[e].second);
  return out;
}

int autograde(std::ostream& log, const Course& course, const GradeRequest& base, const AutogradeRequest& req) {
  const std::vector<std::string> known = course.exercises();
  const auto found = find_exercise_files(req.submission, known);
  std::vector<std::string> assignment = req.exercises;
  if (assignment.empty())
    for (const auto& [e, _] : found) assignment.push_back(e);
  std::vector<Result> results;
  std::string note;
  bool grader_failed = false;
  for (const auto& e : assignment) {
    const Rubric rubric = load_rubric(course.rubric_path(e));
    const auto file = std::find_if(found.begin(), found.end(), [&](const auto& f) { return f.first == e; });
    if (file == found.end()) {
      note += "No file " + e + ".cpp was submitted: its checks score 0.\n";
      results.push_back(unjudged(rubric, Verdict::Missing, "no file named " + e + ".cpp was submitted"));
      continue;
    }
    GradeRequest g = base;
    g.variant = rubric.variants.empty() ? 0 : req.variant >= 0 ? req.variant : student_variant(course, req.student);
    course.set_reference(e, g);
    g.submission = file->second;
    try {
      results.push_back(grade(rubric, g));
      log << e << ": " << file->second << " → " << results.back().verdict << " " << points(results.back().score) << "/"
          << points(results.back().max_score) << "\n";
    } catch (const std::exception& ex) {
      grader_failed = true;
      log << e << ": the grader failed: " << ex.what() << "\n";
      note += "The grader itself failed on " + e + ".cpp (not your fault; your instructor has been told): its checks "
              "score 0 for now.\n";
      results.push_back(unjudged(rubric, Verdict::InternalError, "the grader failed on this file"));
    }
  }
  if (assignment.empty()) {
    note = "No exercise file was found in the submission. Submit your exercise files with their own names (";
    for (size_t i = 0; i < known.size() && i < 3; ++i) note += (i ? ", " : "") + known[i] + ".cpp";
    note += known.size() > 3 ? ", …)." : ").";
  }
  const std::string text = req.platform == Platform::Gradescope
                               ? reports::gradescope_results(results, note)
                               : reports::prairielearn_results(results, note, !assignment.empty() && !grader_failed);
  std::error_code ec;
  fs::create_directories(req.out, ec);
  const std::string err = write_file_atomic((fs::path(req.out) / "results.json").string(), text);
  if (!err.empty()) {
    log << "grade autograde: " << err << "\n";
    return kExitInternal;
  }
  return grader_failed ? kExitInternal : kExitPassed;
}

}  // namespace grader
