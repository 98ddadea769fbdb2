#include "cli/autograde.h"
#include "common/exit_codes.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <map>

#include <fcntl.h>

#include "judge/checks.h"
#include "common/files.h"
#include "cohort/intake.h"
#include "common/safe_dir.h"
#include "course/personalise.h"
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

// A member of an archive, written where the grader can compile it.
std::string archived_copy(const std::string& cache_dir, const Found& f) {
  IntakeFile file;
  file.exercise = f.exercise;
  file.text = f.text;
  std::string error;
  const std::string path = private_copy((fs::path(cache_dir) / "intake").string(), file, error);
  if (path.empty()) throw InternalError(error);
  return path;
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

Chosen find_exercise_files(const std::string& folder, const std::vector<std::string>& exercises) {
  Fd root(open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (root.fd < 0) return {};
  Gathered g;
  gather(root.fd, {}, nullptr, 0, exercises, {}, GatherOptions{}, g);
  return choose(std::move(g), exercises, false);
}

int autograde(std::ostream& log, const Course& course, const GradeRequest& base, const AutogradeRequest& req) {
  const std::vector<std::string> known = course.exercises();
  const Chosen found = find_exercise_files(req.submission, known);
  for (const auto& n : found.notes) log << n.entry << ": " << n.reason << "\n";
  // What was passed over, and why, for the student to read.
  std::string passed;
  for (const auto& n : found.notes)
    if (n.refused) passed += "- " + n.entry + ": " + n.reason + "\n";
  std::vector<std::string> assignment = req.exercises;
  if (assignment.empty())
    for (const auto& e : known)
      if (found.files.count(e) || (found.bad.count(e) && !found.bad.at(e).exercise.empty())) assignment.push_back(e);
  std::vector<Result> results;
  std::string note;
  bool grader_failed = false;
  for (const auto& e : assignment) {
    const Rubric rubric = load_rubric(course.rubric_path(e));
    const auto file = found.files.find(e);
    if (auto bad = found.bad.find(e); file == found.files.end() && bad != found.bad.end()) {
      IntakeFile f;
      f.shown = (fs::path(req.submission) / bad->second.entry).string(), f.bad_archive = bad->second.why;
      results.push_back(unjudged(rubric, Verdict::CompileError, too_large_message(f)));
      note += f.shown + ": the archive was not opened: " + f.bad_archive + ".\n";
      continue;
    }
    if (file == found.files.end()) {
      note += "No file " + e + ".cpp was submitted: its checks score 0.\n";
      results.push_back(unjudged(rubric, Verdict::Missing, "no file named " + e + ".cpp was submitted"));
      continue;
    }
    GradeRequest g = base;
    g.variant = rubric.variants.empty() ? 0 : req.variant >= 0 ? req.variant : student_variant(course, req.student);
    course.set_reference(e, g);
    const Found& f = file->second;
    const std::string shown = (fs::path(req.submission) / f.entry).string();
    if (f.too_large) {  // the student's verdict: never read whole, never compiled
      IntakeFile big;
      big.shown = shown, big.size = f.size;
      results.push_back(unjudged(rubric, Verdict::CompileError, too_large_message(big)));
      log << e << ": " << shown << " → too large (" << f.size << " bytes)\n";
      continue;
    }
    try {
      // A file on disk is graded where it is; one from an archive through a private copy.
      std::string copy;
      g.submission = f.archived ? copy = archived_copy(base.cache_dir, f) : shown;
      results.push_back(grade(rubric, g));
      if (!copy.empty()) {
        results.back().submission = shown;
        for (size_t at; (at = results.back().compile.diagnostics.find(copy)) != std::string::npos;)
          results.back().compile.diagnostics.replace(at, copy.size(), shown);
      }
      log << e << ": " << shown << " → " << results.back().verdict << " " << points(results.back().score) << "/"
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
  if (!passed.empty()) note += "Files in the submission that were not graded:\n" + passed;
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
