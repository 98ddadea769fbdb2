// The class's files that are data: gradebook.csv, checks.csv, summary.json.
#include "reports/gradebook.h"

#include <algorithm>
#include <cmath>

#include "class_stats.h"
#include "reports/escape.h"

namespace reports {

ClassEntry entry_from_report(const json& r, const std::string& report_html) {
  ClassEntry e;
  e.verdict = r.value("verdict", std::string("internal_error"));
  e.score = r.value("score", 0.0);
  e.max_score = r.value("max_score", 0.0);
  e.report = report_html;
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

std::string gradebook_csv(const ClassResults& c) {
  std::string s = "student";
  for (const auto& e : c.exercises) s += "," + csv_field(e.id);
  s += ",total\r\n";
  for (const auto& st : c.students) {
    s += csv_field(st);
    double total = 0;
    for (const auto& e : c.exercises) {
      const ClassEntry* x = c.find(st, e.id);
      // No submission: an empty cell, which an LMS reads as "not graded".
      s += "," + (x ? grader::points(x->score) : std::string());
      if (x) total += x->score;
    }
    s += "," + grader::points(total) + "\r\n";
  }
  return s;
}

std::string checks_csv(const ClassResults& c) {
  std::string s = "student,exercise,verdict,check,name,status,points,max\r\n";
  for (const auto& st : c.students)
    for (const auto& e : c.exercises) {
      const ClassEntry* x = c.find(st, e.id);
      if (!x) continue;
      for (const auto& k : x->checks)
        s += csv_field(st) + "," + csv_field(e.id) + "," + x->verdict + "," + csv_field(k.id) + "," + csv_field(k.name) +
             "," + k.status + "," + grader::points(k.points) + "," + grader::points(k.max) + "\r\n";
    }
  return s;
}

json summary_json(const ClassResults& c) {
  json j;
  j["summary_version"] = 1;
  j["students"] = c.students.size();
  json ex = json::array();
  for (const auto& e : c.exercises) {
    const ExerciseStats s = exercise_stats(c, e);
    json x;
    x["id"] = e.id;
    x["title"] = e.title;
    x["max_score"] = e.max_score;
    x["submitted"] = s.scores.size();
    x["verdicts"] = s.verdicts;
    x["mean"] = rounded(s.mean);
    x["median"] = rounded(s.median);
    x["min"] = s.scores.empty() ? 0.0 : s.scores.front();
    x["max"] = s.scores.empty() ? 0.0 : s.scores.back();
    x["histogram"] = s.histogram;
    ex.push_back(x);
  }
  j["exercises"] = ex;
  const TotalStats t = total_stats(c);
  j["total"] = {{"max_score", c.max_total()},
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
