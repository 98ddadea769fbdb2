// `grade check`, for the course's CI: the recorded facts match a fresh run
// of each solution, every solution scores full marks, every starter is
// gradable without passing, and every fixture gets exactly what its
// .expect.json declares. Files are graded by --jobs workers; what is said
// about them is printed in the course's order as soon as all before is done.
#include <algorithm>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>

#include "cohort/batch.h"
#include "common/exit_codes.h"
#include "course/course.h"
#include "judge/facts.h"
#include "reports/escape.h"
#include "common/files.h"
#include "judge/variants.h"

namespace grader {
namespace fs = std::filesystem;
namespace {

struct Said {
  bool ok;
  std::string what, detail;
  std::string id = "";  // the same from run to run, whatever the verdict: JUnit's testcase name
};

// Variant: the solution at a variant's numbers, and the starter made for it.
// Copied: a correct fixture at another variant's numbers than its own.
enum class Kind { Facts, Solution, Starter, Fixture, Variant, Copied };


struct Task {
  std::string exercise;
  Kind kind;
  std::string file;
  int variant = 0;
};

std::string task_name(const Task& t) {
  switch (t.kind) {
    case Kind::Facts: return "recorded facts";
    case Kind::Solution: return "solution";
    case Kind::Starter: return "starter";
    case Kind::Variant: return "variant " + std::to_string(t.variant);
    case Kind::Copied: return fs::path(t.file).filename().string() + " at variant " + std::to_string(t.variant);
    case Kind::Fixture: break;
  }
  return fs::path(t.file).filename().string();
}

Said facts_current(const Rubric& rubric, const GradeRequest& req, const std::string& e, const std::string& starter) {
  std::string why;
  const json fresh = facts_document(rubric, run_reference(rubric, req), "", false, std::nullopt)["snapshot"];
  auto recorded = read_facts(req.facts, rubric, solution_file_key(req.solution), why);
  std::string diff = recorded ? facts_difference(*recorded, fresh) : why;
  if (diff.empty()) diff = starter_difference(req.facts, read_file(starter));
  return {diff.empty(), e + ": the recorded facts match a fresh run of the solution",
          diff + (diff.empty() ? "" : " (run `grade record " + e + "` and commit " +
                                          fs::path(req.facts).filename().string() + ")")};
}

// What a fixture's grade says against what its .expect.json declares.
Said fixture_verdict(const Result& r, const json& expect, const std::string& what) {
  std::set<std::string> failed, want;
  for (const auto& c : r.checks)
    if (c.status == CheckStatus::Failed) failed.insert(c.id);
  for (const auto& id : expect.value("failed", json::array())) want.insert(id.get<std::string>());
  std::string detail;
  if (name(r.verdict) != expect.value("verdict", ""))
    detail += "verdict " + name(r.verdict) + ", expected " + expect.value("verdict", "") + ". ";
  if (expect.contains("run_status") && name(r.run.status) != expect["run_status"].get<std::string>())
    detail += "run status " + name(r.run.status) + ", expected " + expect["run_status"].get<std::string>() + ". ";
  // What the student must be told: "says" maps a check to words its
  // feedback (why or hint) must contain; "line" is the student's line an
  // escaped exception must be placed at.
  const json says = expect.value("says", json::object());  // kept: items() only refers to it
  for (const auto& [id, words] : says.items()) {
    const CheckResult* c = nullptr;
    for (const auto& x : r.checks) c = x.id == id ? &x : c;
    if (!c) detail += "no check \"" + id + "\" to say \"" + words.get<std::string>() + "\". ";
    else if ((c->message + "\n" + c->hint).find(words.get<std::string>()) == std::string::npos)
      detail += "check " + id + " does not say \"" + words.get<std::string>() + "\" (it says: " + c->message + " / " +
                c->hint + "). ";
  }
  // A file that does not compile: the hint it must get above the compiler's text.
  if (expect.contains("compile_hint")) {
    const std::string want = expect["compile_hint"].get<std::string>();
    std::string all;
    for (const auto& h : r.compile.hints) all += "\n" + h.hint;
    if (all.find(want) == std::string::npos)
      detail += "no compile hint says \"" + want + "\" (" + (all.empty() ? "no hint at all" : "hints:" + all) + "). ";
  }
  if (expect.contains("line") && r.run.line != expect["line"].get<int>())
    detail += "placed at line " + std::to_string(r.run.line) + ", expected line " + expect["line"].dump() + ". ";
  if (expect.contains("score") && r.score != expect["score"].get<double>())
    detail += "score " + points(r.score) + ", expected " + points(expect["score"].get<double>()) + ". ";
  // A run an exception ended was still checked (partial credit): its failed
  // checks are compared where the fixture lists them.
  if ((r.verdict == Verdict::Failed || (scored_before_exception(r) && expect.contains("failed"))) && failed != want) {
    std::string a, b;
    for (const auto& x : failed) a += " " + x;
    for (const auto& x : want) b += " " + x;
    detail += "failed checks:" + a + "; expected:" + b + ".";
  }
  return {detail.empty(),
          what + " → " + name(r.verdict) + (r.verdict == Verdict::RuntimeError ? " (" + name(r.run.status) + ")" : ""), detail};
}

// At a variant's numbers: the starter can be made for it and the solution
// scores full marks there; or a correct file written at the lesson's
// numbers does not (a classmate's copy fails).
Said variant_task(const Task& t, const Rubric& rubric, GradeRequest& req, const std::string& starter) {
  const std::string e = t.exercise, at = " at variant " + std::to_string(t.variant);
  if (t.kind == Kind::Copied) {
    const Result r = grade(rubric, req);
    const bool full = r.verdict == Verdict::Passed && r.score == r.max_score;
    return {!full, e + ": " + fs::path(t.file).filename().string() + at + " → " + points(r.score) + "/" + points(r.max_score),
            "a file written at the lesson's numbers scores full marks at variant " + std::to_string(t.variant) +
                "'s: its checks do not tell the variants apart"};
  }
  const json given = given_at(rubric, t.variant);
  const json ref = run_reference(rubric, req);
  starter_at(read_file(starter).value_or(""), rubric, t.variant, given, ref);  // throws when a template misses
  const Result sol = grade(rubric, req);
  return {sol.verdict == Verdict::Passed && sol.score == sol.max_score,
          e + ": the solution" + at + " (" + given_text(given) + ") scores " + points(sol.score) + "/" + points(sol.max_score),
          sol.verdict == Verdict::Passed ? "" : name(sol.verdict) + ": " + sol.run.message + sol.compile.diagnostics};
}

Said run_task(const Task& t, const Course& course, const Rubric& rubric, const GradeRequest& base) {
  GradeRequest req = base;
  req.variant = t.variant;
  course.set_reference(t.exercise, req);
  const std::string e = t.exercise;
  try {
    if (t.kind == Kind::Facts) return facts_current(rubric, req, e, course.starter_path(e));
    req.submission = t.file;
    if (t.kind == Kind::Variant || t.kind == Kind::Copied) return variant_task(t, rubric, req, course.starter_path(e));
    if (t.kind == Kind::Solution) {
      const Result sol = grade(rubric, req);
      return {sol.verdict == Verdict::Passed && sol.score == sol.max_score,
              e + ": the solution scores " + points(sol.score) + "/" + points(sol.max_score),
              sol.verdict == Verdict::Passed ? "" : name(sol.verdict) + ": " + sol.run.message + sol.compile.diagnostics};
    }
    if (t.kind == Kind::Starter) {
      // Gradable as handed out (it may fail to compile or fail its checks),
      // and not already passing: then its blanks would ask for nothing.
      const Result r = grade(rubric, req);
      const bool full = r.verdict == Verdict::Passed && r.score == r.max_score;
      return {!full, e + ": the starter → " + name(r.verdict) + " " + points(r.score) + "/" + points(r.max_score),
              "the starter already scores full marks: its blanks ask for nothing the rubric checks"};
    }
    const std::string what = e + ": " + fs::path(t.file).filename().string();
    fs::path expect_path = t.file;
    expect_path.replace_extension(".expect.json");
    json expect;
    try {
      expect = read_json_file(expect_path.string());
    } catch (const std::exception& ex) {
      return {false, what, "cannot read " + expect_path.string() + ": " + ex.what()};
    }
    return fixture_verdict(grade(rubric, req), expect, what);
  } catch (const std::exception& ex) {
    if (t.kind == Kind::Variant || t.kind == Kind::Copied) return {false, e + ": " + task_name(t), ex.what()};
    const char* what = t.kind == Kind::Facts ? ": the solution runs" : t.kind == Kind::Solution ? ": the solution" : ": the starter";
    return {false, t.kind == Kind::Fixture ? e + ": " + fs::path(t.file).filename().string() : e + what, ex.what()};
  }
}

// junit.xml for one exercise's checked files: a testcase per file, its
// problem in <failure>, where CI test views show it.
std::string check_junit(const std::string& exercise, const std::vector<const Said*>& said, const std::string& stamp,
                        const std::string& host) {
  size_t failures = 0;
  for (const Said* s : said) failures += !s->ok;
  auto attr = [](const std::string& k, const std::string& v) { return " " + k + "=\"" + reports::xml_text(v) + "\""; };
  const std::string counts = attr("tests", std::to_string(said.size())) + attr("failures", std::to_string(failures)) +
                             attr("errors", "0") + attr("skipped", "0");
  std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites" + attr("name", "grade check") + counts + ">\n";
  x += "  <testsuite" + attr("name", exercise) + counts + attr("timestamp", stamp) + attr("hostname", host) + ">\n";
  for (const Said* s : said) {
    x += "    <testcase" + attr("classname", exercise) + attr("name", s->id) + ">\n";
    if (!s->ok)
      x += "      <failure" + attr("message", s->what) + attr("type", "not as declared") + ">" +
           reports::xml_text(s->what + "\n" + s->detail) + "</failure>\n";
    x += "      <system-out>" + reports::xml_text(s->what) + "</system-out>\n    </testcase>\n";
  }
  return x + "  </testsuite>\n</testsuites>\n";
}

}  // namespace

int check_course(std::ostream& os, const Course& course, const GradeRequest& base, int jobs, int checked_variants,
                 const std::string& junit_dir, const Style& st) {
  int problems = 0;
  auto say = [&](const Said& s) {
    os << (s.ok ? st.green() + "✓ " : st.red() + "✗ ") << st.reset() << s.what;
    if (!s.ok && !s.detail.empty()) os << "\n    " << s.detail;
    os << "\n";
    problems += !s.ok;
  };
  std::map<std::string, Rubric> rubrics;
  std::vector<Task> tasks;
  for (const auto& e : course.exercises()) {
    try {
      rubrics[e] = load_rubric(course.rubric_path(e));
    } catch (const std::exception& ex) {
      say({false, e + ": rubric", ex.what()});
      continue;
    }
    tasks.push_back({e, Kind::Facts, ""});
    tasks.push_back({e, Kind::Solution, course.solution_path(e)});
    tasks.push_back({e, Kind::Starter, course.starter_path(e)});
    std::vector<fs::path> fixtures;
    std::error_code ec;
    for (const auto& f : fs::directory_iterator(course.root + "/tests/fixtures/" + e, ec))
      if (f.path().extension() == ".cpp") fixtures.push_back(f.path());
    std::sort(fixtures.begin(), fixtures.end());
    for (const auto& f : fixtures) tasks.push_back({e, Kind::Fixture, f.string()});
    const Rubric& rubric = rubrics[e];
    const int variants = static_cast<int>(std::min<long>(checked_variants, variant_capacity(rubric)));
    for (int v = 1; v <= variants; ++v) tasks.push_back({e, Kind::Variant, course.solution_path(e), v});
    // Each correct fixture at one variant, in turn: none passes at numbers not its own.
    int next = 0;
    for (const auto& f : fixtures) {
      if (variants == 0) break;
      fs::path expect = f;
      expect.replace_extension(".expect.json");
      json want;
      try {
        want = read_json_file(expect.string());
      } catch (const std::exception&) {
        continue;  // its Fixture task says so
      }
      // (A file that asks the lab for the statement's numbers is right at every variant.)
      const bool reads_given = read_file(f.string()).value_or("").find("lab.given(") != std::string::npos;
      if (want.value("verdict", "") == "passed" && !reads_given) tasks.push_back({e, Kind::Copied, f.string(), 1 + next++ % variants});
    }
  }
  std::vector<std::optional<Said>> said(tasks.size());
  std::mutex m;
  size_t printed = 0;
  parallel_for(tasks.size(), jobs, [&](size_t i) {
    Said s = run_task(tasks[i], course, rubrics.at(tasks[i].exercise), base);
    s.id = task_name(tasks[i]);
    std::lock_guard<std::mutex> lock(m);
    said[i] = std::move(s);
    for (; printed < said.size() && said[printed]; ++printed) say(*said[printed]);
    os.flush();
  });
  if (!junit_dir.empty()) {
    std::error_code ec;
    fs::create_directories(junit_dir, ec);
    const std::string host = host_name();
    std::string stamp = utc_now();
    stamp.pop_back();  // JUnit's timestamp has no time zone: the UTC time without its "Z"
    std::map<std::string, std::vector<const Said*>> by_exercise;
    for (size_t i = 0; i < tasks.size(); ++i) by_exercise[tasks[i].exercise].push_back(&*said[i]);
    for (const auto& [e, list] : by_exercise) {
      const std::string err = write_file_atomic((fs::path(junit_dir) / ("check-" + e + ".xml")).string(),
                                                check_junit(e, list, stamp, host));
      if (!err.empty()) os << "grade check: " << err << "\n", ++problems;
    }
  }
  os << (problems ? st.red() : st.green()) << tasks.size() << " checked: " << (tasks.size() - std::min<size_t>(problems, tasks.size()))
     << " as declared, " << problems << " problem" << (problems == 1 ? "" : "s")
     << (problems ? "" : ": the course checks out") << st.reset() << "\n";
  return problems ? kExitFailed : kExitPassed;
}

}  // namespace grader
