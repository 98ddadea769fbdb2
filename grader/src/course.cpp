#include "course.h"

#include <algorithm>
#include <filesystem>
#include <regex>
#include <set>

#include "config.h"
#include "files.h"

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

// exercise2 < exercise10: compare the number, then the name.
json read_json_file(const fs::path& p) {
  auto text = read_file(p.string());
  if (!text) throw std::runtime_error("cannot read " + p.string());
  return json::parse(*text);
}

}  // namespace

bool numeric_less(const std::string& a, const std::string& b) {
  auto num = [](const std::string& s) {
    size_t i = s.find_first_of("0123456789");
    return i == std::string::npos ? -1L : std::atol(s.c_str() + i);
  };
  return num(a) != num(b) ? num(a) < num(b) : a < b;
}

std::string Course::rubric_path(const std::string& e) const { return root + "/solutions/" + e + ".rubric.json"; }
std::string Course::solution_path(const std::string& e) const { return root + "/solutions/" + e + ".cpp"; }
std::string Course::starter_path(const std::string& e) const { return root + "/exercises/" + e + ".cpp"; }

std::vector<std::string> Course::exercises() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& f : fs::directory_iterator(root + "/solutions", ec)) {
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
        json r = read_json_file(report);
        last = "last: " + r.value("verdict", std::string("?")) + " " + points(r.value("score", 0.0)) + "/" +
               points(r.value("max_score", 0.0));
      } catch (const std::exception&) {
        last = "last report unreadable";
      }
    }
    os << st.bold() << e << st.reset() << std::string(e.size() < 12 ? 12 - e.size() : 1, ' ') << title << st.dim()
       << "  (" << last << ")" << st.reset() << "\n";
  }
  return 0;
}

int check_course(std::ostream& os, const Course& course, const GradeRequest& base, const Style& st) {
  int problems = 0;
  auto report = [&](bool ok, const std::string& what, const std::string& detail) {
    os << (ok ? st.green() + "✓ " : st.red() + "✗ ") << st.reset() << what;
    if (!ok && !detail.empty()) os << "\n    " << detail;
    os << "\n";
    problems += !ok;
  };
  for (const auto& e : course.exercises()) {
    Rubric rubric;
    try {
      rubric = load_rubric(course.rubric_path(e));
    } catch (const std::exception& ex) {
      report(false, e + ": rubric", ex.what());
      continue;
    }
    GradeRequest req = base;
    req.solution = course.solution_path(e);
    // Grades one file; a grader failure on it is reported as a problem
    // under `what` and yields nothing.
    auto graded = [&](const std::string& file, const std::string& what) -> std::optional<Result> {
      req.submission = file;
      try {
        return grade(rubric, req);
      } catch (const std::exception& ex) {
        report(false, what, ex.what());
        return std::nullopt;
      }
    };
    auto sol = graded(req.solution, e + ": the solution");
    if (!sol) continue;
    report(sol->verdict == "passed" && sol->score == sol->max_score,
           e + ": the solution scores " + points(sol->score) + "/" + points(sol->max_score),
           sol->verdict == "passed" ? "" : sol->verdict + ": " + sol->run.message + sol->compile.diagnostics);
    // The starter must be gradable as handed out (it may fail to compile or
    // fail its checks), and must not already pass: then its blanks would ask
    // for nothing the rubric checks.
    if (auto r = graded(course.starter_path(e), e + ": the starter")) {
      const bool full = r->verdict == "passed" && r->score == r->max_score;
      report(!full, e + ": the starter → " + r->verdict + " " + points(r->score) + "/" + points(r->max_score),
             "the starter already scores full marks: its blanks ask for nothing the rubric checks");
    }
    std::error_code ec;
    std::vector<fs::path> fixtures;
    for (const auto& f : fs::directory_iterator(course.root + "/tests/fixtures/" + e, ec))
      if (f.path().extension() == ".cpp") fixtures.push_back(f.path());
    std::sort(fixtures.begin(), fixtures.end());
    for (const auto& f : fixtures) {
      fs::path expect_path = f;
      expect_path.replace_extension(".expect.json");
      const std::string what = e + ": " + f.filename().string();
      json expect;
      try {
        expect = read_json_file(expect_path);
      } catch (const std::exception& ex) {
        report(false, what, "cannot read " + expect_path.string() + ": " + ex.what());
        continue;
      }
      const auto graded_fixture = graded(f.string(), what);
      if (!graded_fixture) continue;
      const Result& r = *graded_fixture;
      std::set<std::string> failed, want;
      for (const auto& c : r.checks)
        if (c.status == "failed") failed.insert(c.id);
      for (const auto& id : expect.value("failed", json::array())) want.insert(id.get<std::string>());
      std::string detail;
      if (r.verdict != expect.value("verdict", "")) detail += "verdict " + r.verdict + ", expected " + expect.value("verdict", "") + ". ";
      if (expect.contains("run_status") && r.run.status != expect["run_status"])
        detail += "run status " + r.run.status + ", expected " + expect["run_status"].get<std::string>() + ". ";
      // What the student must be told: "says" maps a check to words its
      // feedback (why or hint) must contain; "line" is the student's line
      // an escaped exception must be placed at.
      const json says = expect.value("says", json::object());
      for (const auto& [id, words] : says.items()) {
        const CheckResult* c = nullptr;
        for (const auto& x : r.checks) c = x.id == id ? &x : c;
        if (!c) detail += "no check \"" + id + "\" to say \"" + words.get<std::string>() + "\". ";
        else if ((c->message + "\n" + c->hint).find(words.get<std::string>()) == std::string::npos)
          detail += "check " + id + " does not say \"" + words.get<std::string>() + "\" (it says: " + c->message +
                    " / " + c->hint + "). ";
      }
      if (expect.contains("line") && r.run.line != expect["line"].get<int>())
        detail += "placed at line " + std::to_string(r.run.line) + ", expected line " + expect["line"].dump() + ". ";
      if (r.verdict == "failed" && failed != want) {
        std::string a, b;
        for (const auto& x : failed) a += " " + x;
        for (const auto& x : want) b += " " + x;
        detail += "failed checks:" + a + "; expected:" + b + ".";
      }
      report(detail.empty(), what + " → " + r.verdict + (r.verdict == "runtime_error" ? " (" + r.run.status + ")" : ""), detail);
    }
  }
  os << (problems ? st.red() : st.green()) << (problems ? std::to_string(problems) + " problem(s)" : "the course checks out")
     << st.reset() << "\n";
  return problems ? kExitFailed : kExitPassed;
}

}  // namespace grader
