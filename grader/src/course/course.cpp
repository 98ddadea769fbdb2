#include "course/course.h"
#include "common/exit_codes.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "config.h"
#include "judge/facts.h"
#include "common/files.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

std::string shown(const fs::path& p) {
  std::error_code ec;
  fs::path cwd = fs::current_path(ec);
  fs::path rel = fs::proximate(p, cwd, ec);
  if (!ec && !rel.empty() && rel.native().rfind("..", 0) != 0) return rel.string();
  return fs::absolute(p, ec).lexically_normal().string();
}

// The last result as the console's score line says it ("17/18, 1 of 17
// checks failed"; "did not finish", never report.json's "runtime_error").
std::string last_result(const json& r) {
  const std::string score = points(r.value("score", 0.0)) + "/" + points(r.value("max_score", 0.0));
  const auto v = verdict_named(r.value("verdict", std::string()));
  if (!v) return score;
  size_t failed = 0, all = 0;
  for (const auto& c : r.value("checks", json::array())) failed += c.value("status", "") != "passed", ++all;
  switch (*v) {
    case Verdict::Passed: return score + ", every check passed";
    case Verdict::Failed: return score + ", " + std::to_string(failed) + " of " + std::to_string(all) + " checks failed";
    case Verdict::CompileError: return score + ", does not compile";
    case Verdict::RuntimeError: return score + ", did not finish";
    case Verdict::Missing: return score + ", missing";
    case Verdict::InternalError: return score + ", internal error";
    case Verdict::SharedFile: return "held: a file shared with another student's";
  }
  return score;
}

}  // namespace

bool numeric_less(const std::string& a, const std::string& b) {
  auto num = [](const std::string& s) {
    size_t i = s.find_first_of("0123456789");
    return i == std::string::npos ? -1L : std::atol(s.c_str() + i);
  };
  return num(a) != num(b) ? num(a) < num(b) : a < b;
}

bool Course::is_release() const {
  std::error_code ec;
  return !fs::is_directory(root + "/solutions", ec) && fs::is_directory(root + "/rubrics", ec);
}
std::string Course::rubric_dir() const { return root + (is_release() ? "/rubrics" : "/solutions"); }
std::string Course::rubric_path(const std::string& e) const { return rubric_dir() + "/" + e + ".rubric.json"; }
std::string Course::solution_path(const std::string& e) const { return is_release() ? "" : root + "/solutions/" + e + ".cpp"; }
std::string Course::facts_path(const std::string& e, int variant) const {
  return variant == 0 ? rubric_dir() + "/" + e + ".facts.json"
                      : rubric_dir() + "/variants/" + e + ".v" + std::to_string(variant) + ".facts.json";
}
void Course::set_reference(const std::string& e, GradeRequest& req) const {
  req.solution = solution_path(e);
  req.facts = facts_path(e, req.variant);
}
std::string Course::starter_path(const std::string& e) const { return root + "/exercises/" + e + ".cpp"; }

std::vector<std::string> Course::exercises() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(rubric_dir(), ec)) {
    const std::string n = f.path().filename().string();
    const std::string suffix = ".rubric.json";
    if (n.size() > suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
      out.push_back(n.substr(0, n.size() - suffix.size()));
  }
  std::sort(out.begin(), out.end(), numeric_less);
  return out;
}

Course installed_course() { return Course{GRADLAB_SOURCE_DIR}; }

std::string find_submission(const Course& course, const std::string& exercise) {
  std::error_code ec;
  const std::string file = exercise + ".cpp";
  for (fs::path d = fs::current_path(ec); !d.empty(); d = d.parent_path()) {
    for (const fs::path& p : {d / "exercises" / file, d / file})
      if (fs::is_regular_file(p, ec)) return shown(p);
    if (d == d.parent_path()) break;
  }
  return shown(fs::path(course.root) / "exercises" / file);
}

std::string default_report_dir(const std::string& submission, const std::string& exercise) {
  std::error_code ec;
  fs::path dir = fs::absolute(submission, ec).parent_path();
  fs::path base = dir.filename() == "exercises" ? dir.parent_path() : fs::current_path(ec);
  return shown(base / "gradlab-reports" / exercise);
}

std::string write_reports(const std::string& dir, const Result& r,
                          const std::vector<std::unique_ptr<reports::Writer>>& writers) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return "cannot create " + dir + ": " + ec.message();
  // Pictures of an earlier run would be stale (a graph check that failed
  // then and passes now): the grader's own graph-*.png files go first.
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.starts_with("graph-") && name.ends_with(".png")) fs::remove(e.path(), ec);
  }
  for (const auto& w : writers)
    for (const auto& f : w->files(r)) {
      const std::string err = write_file_atomic((fs::path(dir) / f.name).string(), f.bytes);
      if (!err.empty()) return err;
    }
  return "";
}

int list_exercises(std::ostream& os, const Course& course, const Style& st) {
  for (const auto& e : course.exercises()) {
    std::string title = "(rubric unreadable)", last = "not graded yet";
    try {
      title = read_json_file(course.rubric_path(e)).value("title", "");
    } catch (const std::exception&) {
    }
    const fs::path report = fs::path(default_report_dir(find_submission(course, e), e)) / "report.json";
    std::error_code ec;
    if (fs::exists(report, ec)) {
      try {
        json r = read_json_file(report.string());
        last = "last: " + last_result(r);
      } catch (const std::exception&) {
        last = "last report unreadable";
      }
    }
    os << st.bold() << e << st.reset() << std::string(e.size() < 12 ? 12 - e.size() : 1, ' ') << title << st.dim()
       << "  (" << last << ")" << st.reset() << "\n";
  }
  return 0;
}

int record_facts(std::ostream& os, const Course& course, const GradeRequest& base, const std::vector<std::string>& only,
                 const Style& st) {
  if (course.is_release()) {
    os << "grade record: this is a student release: it has no solutions to record facts from\n";
    return kExitUsage;
  }
  int problems = 0;
  for (const auto& e : only.empty() ? course.exercises() : only) {
    GradeRequest req = base;
    course.set_reference(e, req);
    try {
      const Rubric rubric = load_rubric(course.rubric_path(e));
      const json doc =
          facts_document(rubric, run_reference(rubric, req), solution_file_key(req.solution), false,
                         read_file(course.starter_path(e)));
      const std::string err = write_file_atomic(req.facts, doc.dump(1) + "\n");
      if (!err.empty()) throw std::runtime_error(err);
      os << st.green() << "✓ " << st.reset() << e << ": " << shown(req.facts) << "\n";
    } catch (const std::exception& ex) {
      os << st.red() << "✗ " << st.reset() << e << ": " << ex.what() << "\n";
      ++problems;
    }
  }
  return problems ? kExitInternal : kExitPassed;
}

}  // namespace grader
