// The class's files that are data: gradebook.csv, checks.csv, summary.json.
#include "reports/gradebook.h"

#include <algorithm>
#include <cmath>

#include "class_stats.h"
#include "reports/escape.h"

namespace reports {

ClassEntry entry_from_report(const json& r, const std::string& report_html) {
  ClassEntry e;
  // Read back from a report.json, maybe another shard's: a word that names
  // no verdict is the grader's failure, never a pass.
  e.verdict = grader::verdict_named(r.value("verdict", "")).value_or(grader::Verdict::InternalError);
  e.score = r.value("score", 0.0);
  e.max_score = r.value("max_score", 0.0);
  e.report = report_html;
  if (r.contains("run") && r["run"].is_object()) {
    const std::string status = r["run"].value("status", "not_run");
    e.run_status = grader::run_status_named(status).value_or(grader::RunStatus::Crashed);  // unknown: not to be trusted
    e.isolation = r["run"].value("isolation", "");
  }
  if (r.contains("checks") && r["checks"].is_array())
    for (const auto& c : r["checks"])
      e.checks.push_back({c.value("id", ""), c.value("name", ""), c.value("status", ""), c.value("points", 0.0),
                          c.value("max", 0.0)});
  return e;
}

const ClassEntry* ClassResults::find(const std::string& student, const std::string& exercise) const {
  auto it = entries.find({student, exercise});
  return it == entries.end() ? nullptr : &it->second;
}

double ClassResults::max_total() const {
  double m = 0;
  for (const auto& e : exercises) m += e.max_score;
  return m;
}

bool ClassResults::submitted_nothing(const std::string& student) const {
  for (const auto& e : exercises)
    if (find(student, e.id)) return false;
  return true;
}

std::vector<std::string> ClassResults::nothing_handed_in() const {
  std::vector<std::string> out;
  for (const auto& st : students)
    if (submitted_nothing(st)) out.push_back(st);
  return out;
}

const Identity& ClassResults::identity(const std::string& student) const {
  static const Identity none;
  auto it = identities.find(student);
  return it == identities.end() ? none : it->second;
}

bool held(const ClassEntry* e) { return e && e->verdict == grader::Verdict::SharedFile; }

bool ClassResults::any_held(const std::string& student) const {
  for (const auto& e : exercises)
    if (held(find(student, e.id))) return true;
  return false;
}

bool ran_to_its_end(const std::string& status) { return status.empty() || status == "passed" || status == "failed" || status == "ok"; }

std::string gradebook_status(const ClassEntry* e) {
  if (!e) return "missing";
  using grader::RunStatus, grader::Verdict;
  if (e->verdict == Verdict::CompileError || e->verdict == Verdict::InternalError || e->verdict == Verdict::SharedFile)
    return grader::name(e->verdict);
  switch (e->run_status) {
    case RunStatus::Timeout:
    case RunStatus::CpuLimit: return "timeout";
    case RunStatus::Exception: return "exception";
    case RunStatus::Ok:
    case RunStatus::NotRun: return grader::name(e->verdict);  // passed or failed, as every report says
    default: return "crashed";  // a signal, an exit, a memory or output limit, an untrustworthy result
  }
}

namespace {

// Excel opens a CSV as UTF-8 only when it starts with a byte order mark;
// every other reader here takes it either way, so it is asked for (--bom).
std::string csv_start(const ClassResults& c) { return c.csv_bom ? "\xEF\xBB\xBF" : ""; }

bool any_identity(const ClassResults& c) {
  for (const auto& st : c.students)
    if (!c.identity(st).empty()) return true;
  return false;
}

double total_of(const ClassResults& c, const std::string& student) {
  double total = 0;
  for (const auto& e : c.exercises)
    if (const ClassEntry* x = c.find(student, e.id)) total += x->score;
  return total;
}

}  // namespace

std::string total_cell(const ClassResults& c, const std::string& student) {
  return c.submitted_nothing(student) || c.any_held(student) ? std::string() : grader::points(total_of(c, student));
}

std::string gradebook_csv(const ClassResults& c) {
  const bool ids = any_identity(c);
  std::string s = csv_start(c) + "student";
  if (ids) s += ",name,id,sis_id,login,email,section";
  // A late column beside each verdict only in a class with a late file; a
  // submitted column only where the LMS told when files were handed in.
  const bool lates = !c.late.empty(), times = !c.submitted.empty();
  for (const auto& e : c.exercises)
    s += "," + csv_field(e.id) + "," + csv_field(e.id + " verdict") + (lates ? "," + csv_field(e.id + " late") : "") +
         (times ? "," + csv_field(e.id + " submitted") : "");
  s += ",total\r\n";
  for (const auto& st : c.students) {
    s += csv_field(st);
    if (ids) {
      const Identity& i = c.identity(st);
      for (const std::string* f : {&i.name, &i.id, &i.sis_id, &i.login, &i.email, &i.section}) s += "," + csv_field(*f);
    }
    for (const auto& e : c.exercises) {
      const ClassEntry* x = c.find(st, e.id);
      // No submission: an empty score, which an LMS reads as "not graded".
      s += "," + (x && !held(x) ? grader::points(x->score) : std::string()) + "," + gradebook_status(x);
      if (lates) s += std::string(",") + (c.is_late(st, e.id) ? "late" : "");
      if (times) {
        const auto at = c.submitted.find({st, e.id});
        s += "," + (at == c.submitted.end() ? std::string() : csv_field(at->second));
      }
    }
    // Nothing handed in, or a file held: no total either, so that no one reads it as earned.
    s += "," + total_cell(c, st) + "\r\n";
  }
  return s;
}

std::string canvas_csv(const ClassResults& c) {
  std::string s = csv_start(c) + "Student,ID,SIS User ID,SIS Login ID,Section," + csv_field(c.lms_assignment) + "\r\n";
  s += "Points Possible,,,,," + grader::points(c.max_total()) + "\r\n";
  for (const auto& st : c.students) {
    const Identity& i = c.identity(st);
    s += csv_field(i.name.empty() ? st : i.name) + "," + csv_field(i.id) + "," + csv_field(i.sis_id) + "," +
         csv_field(i.login) + "," + csv_field(i.section) + "," + total_cell(c, st) + "\r\n";
  }
  return s;
}

std::string moodle_csv(const ClassResults& c) {
  std::string s = csv_start(c) +
                  "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
                  "Last modified (submission),Last modified (grade),Feedback comments\r\n";
  for (const auto& st : c.students) {
    const Identity& i = c.identity(st);
    const bool none = c.submitted_nothing(st);
    std::string feedback;
    for (const auto& e : c.exercises) {
      const ClassEntry* x = c.find(st, e.id);
      feedback += (feedback.empty() ? "" : "; ") + e.id + ": " +
                  (held(x) ? std::string("held (a file shared with another student's)")
                   : x     ? grader::points(x->score) + "/" + grader::points(e.max_score) + " (" + gradebook_status(x) + ")"
                           : std::string("missing"));
    }
    s += csv_field(i.participant.empty() ? "" : "Participant " + i.participant) + "," +
         csv_field(i.name.empty() ? st : i.name) + "," + csv_field(i.email) + "," +
         (none ? "No submission" : "Submitted for grading") + "," +
         total_cell(c, st) + "," + grader::points(c.max_total()) +
         ",Yes,,," + csv_field(feedback) + "\r\n";
  }
  return s;
}

std::string checks_csv(const ClassResults& c) {
  std::string s = csv_start(c) + "student,exercise,verdict,check,name,status,points,max\r\n";
  for (const auto& st : c.students)
    for (const auto& e : c.exercises) {
      const ClassEntry* x = c.find(st, e.id);
      if (!x) continue;
      for (const auto& k : x->checks)
        s += csv_field(st) + "," + csv_field(e.id) + "," + grader::name(x->verdict) + "," + csv_field(k.id) + "," + csv_field(k.name) +
             "," + k.status + "," + grader::points(k.points) + "," + grader::points(k.max) + "\r\n";
    }
  return s;
}

bool ClassResults::points_mismatch() const {
  return lms_points && std::fabs(lms_points->possible - max_total()) > 1e-9;
}

std::string change_reasons(const ScoreChange& c) {
  static const std::map<std::string, std::string> words = {
      {"grader", "the grader changed"},
      {"rubric", "the rubric changed"},
      {"solution", "the reference solution changed"},
      {"facts", "the recorded facts changed"},
      {"file", "the student's file changed"},
      {"gone", "no file this time"},
      {"regrade", "graded again (--regrade); nothing it depends on changed"},
      {"unknown", "the earlier run kept no record of what it depended on"}};
  std::string out;
  for (const auto& why : c.why) {
    const auto w = words.find(why);
    out += (out.empty() ? "" : "; ") + (w == words.end() ? why : w->second);
  }
  return out;
}

json summary_json(const ClassResults& c) {
  json j;
  j["summary_version"] = 1;
  j["students"] = c.students.size();
  if (!c.layout.empty()) j["layout"] = c.layout;
  // Who handed in nothing at all: listed, and left out of every statistic.
  json nothing = json::array();
  for (const auto& st : c.nothing_handed_in()) nothing.push_back(visible(st, false));
  j["submitted_nothing"] = nothing;
  // Whose files are held for a person (hard links to another student's
  // file): no score and no total until someone decides.
  json held_files = json::array();
  for (const auto& st : c.students)
    for (const auto& e : c.exercises)
      if (held(c.find(st, e.id))) held_files.push_back({{"student", visible(st, false)}, {"exercise", e.id}});
  j["held"] = held_files;
  json ex = json::array();
  for (const auto& e : c.exercises) {
    const ExerciseStats s = exercise_stats(c, e);
    json x;
    x["id"] = e.id;
    x["title"] = e.title;
    x["max_score"] = e.max_score;
    x["submitted"] = s.scores.size();
    x["missing"] = s.missing;
    x["held"] = s.held;
    x["verdicts"] = s.verdicts;
    x["gradebook_verdicts"] = s.statuses;
    x["mean"] = rounded(s.mean);
    x["median"] = rounded(s.median);
    x["min"] = s.scores.empty() ? 0.0 : s.scores.front();
    x["max"] = s.scores.empty() ? 0.0 : s.scores.back();
    x["histogram"] = s.histogram;
    ex.push_back(x);
  }
  j["exercises"] = ex;
  const TotalStats t = total_stats(c);
  // The fence the class's code ran in: "fallback" in containers without
  // user namespaces (grader/SECURITY.md), "bubblewrap" elsewhere.
  j["fences"] = class_fences(c);
  j["total"] = {{"students", t.totals.size()},
                {"max_score", c.max_total()},
                {"mean", rounded(t.mean)},
                {"median", rounded(t.median)},
                {"histogram", t.histogram}};
  json failed = json::array();
  for (const auto& f : most_failed(c)) {
    json students = json::array();
    for (const auto& st : f.students) students.push_back(st);
    failed.push_back({{"exercise", f.exercise}, {"check", f.check}, {"name", f.name}, {"failed", f.students.size()},
                      {"students", students}});
  }
  j["most_failed"] = failed;
  json intake = json::array();
  for (const auto& n : c.intake)
    intake.push_back({{"entry", visible(n.entry, false)}, {"reason", visible(n.reason, false)}, {"refused", n.refused}});
  j["intake"] = intake;
  if (!c.missing_shards.empty()) j["missing_shards"] = {{"of", c.shards}, {"missing", c.missing_shards}};
  json changes = json::array();
  for (const auto& x : c.changes)
    changes.push_back({{"student", visible(x.student, false)},
                       {"exercise", x.exercise},
                       {"before", x.before ? json(*x.before) : json(nullptr)},
                       {"after", x.after ? json(*x.after) : json(nullptr)},
                       {"before_verdict", x.before_status},
                       {"after_verdict", x.after_status},
                       {"why", x.why}});
  j["changes"] = changes;
  json late = json::array();
  for (const auto& [st, e] : c.late) late.push_back({{"student", visible(st, false)}, {"exercise", e}});
  j["late"] = late;
  json submitted = json::array();
  for (const auto& [k, at] : c.submitted) submitted.push_back({{"student", visible(k.first, false)}, {"exercise", k.second}, {"at", at}});
  j["submitted_at"] = submitted;
  if (c.lms_points)
    j["lms_points"] = {{"column", c.lms_points->column},
                       {"points_possible", c.lms_points->possible},
                       {"rubrics_total", c.max_total()},
                       {"mismatch", c.points_mismatch()},
                       {"accepted", c.lms_points->accepted},
                       {"canvas_csv_written", !c.canvas_refused()}};
  if (c.similarity_threshold > 0) {
    json pairs = json::array();
    for (const auto& p : c.similar)
      pairs.push_back({{"exercise", p.exercise}, {"a", visible(p.a, false)}, {"b", visible(p.b, false)},
                       {"percent", p.percent}, {"page", p.page}});
    j["similarity"] = {{"threshold", c.similarity_threshold}, {"pairs", pairs}};
  }
  return j;
}

}  // namespace reports
