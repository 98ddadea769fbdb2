#include "cohort/class_files.h"
#include "cohort/feedback_zip.h"

#include "common/files.h"
#include "reports/escape.h"

namespace grader {
namespace fs = std::filesystem;

std::string slot(const std::string& out, const std::string& student, const std::string& exercise) {
  return (fs::path(out) / "students" / student / exercise).string();
}

json read_json_or_null(const fs::path& p) {
  auto text = read_file(p.string());
  if (!text) return nullptr;
  try {
    return json::parse(*text);
  } catch (const std::exception&) {
    return nullptr;
  }
}

reports::ClassResults collect(const std::string& out, const std::vector<std::string>& students,
                              const std::vector<reports::ClassExercise>& exercises) {
  reports::ClassResults c;
  c.students = students;
  c.exercises = exercises;
  for (const auto& s : students)
    for (const auto& e : exercises) {
      const fs::path dir = slot(out, s, e.id);
      const std::string rel = (fs::path("students") / s / e.id / "report.html").string();
      std::error_code ec;
      if (fs::exists(dir / kKeyFile, ec)) {
        const json r = read_json_or_null(dir / "report.json");
        if (r.is_object()) c.entries[{s, e.id}] = reports::entry_from_report(r, rel);
      } else if (fs::exists(dir / kErrorFile, ec)) {
        reports::ClassEntry x;
        x.verdict = Verdict::InternalError;
        x.max_score = e.max_score;
        c.entries[{s, e.id}] = x;
      }
    }
  return c;
}

namespace {
// A student's identity in batch.json, field by field, and back (identity_from).
json identity_json(const reports::Identity& i) {
  return {{"name", i.name},   {"id", i.id},         {"sis_id", i.sis_id},          {"login", i.login},
          {"email", i.email}, {"section", i.section}, {"participant", i.participant}};
}
}  // namespace

reports::Identity identity_from(const json& j) {
  return {j.value("name", ""),  j.value("id", ""),      j.value("sis_id", ""),     j.value("login", ""),
          j.value("email", ""), j.value("section", ""), j.value("participant", "")};
}

std::string write_class_files(const std::string& out, const reports::ClassResults& c, const std::vector<int>& shards,
                              const json& options) {
  json manifest;
  manifest["batch_version"] = 1;
  manifest["options"] = options;
  json intake = json::array();
  for (const auto& n : c.intake) intake.push_back({{"entry", n.entry}, {"reason", n.reason}, {"refused", n.refused}});
  manifest["intake"] = intake;
  json ex = json::array();
  for (const auto& e : c.exercises) ex.push_back({{"id", e.id}, {"title", e.title}, {"max_score", e.max_score}});
  manifest["exercises"] = ex;
  manifest["students"] = c.students;
  // What merge needs to write the same class files as one unsharded run
  // (the CSV options are in `options`).
  manifest["layout"] = c.layout;
  json ids = json::object();
  for (const auto& [st, i] : c.identities) ids[st] = identity_json(i);
  manifest["identities"] = ids;
  manifest["shard_count"] = c.shards;
  manifest["shards"] = shards;
  if (!c.missing_shards.empty()) manifest["missing_shards"] = c.missing_shards;
  json late = json::array();
  for (const auto& [st, e] : c.late) late.push_back({st, e});
  manifest["late"] = late;
  json entries = json::array();
  for (const auto& [key, entry] : c.lms_entries) entries.push_back({key.first, key.second, entry});
  manifest["lms_entries"] = entries;
  json times = json::array();
  for (const auto& [key, at] : c.submitted) times.push_back({key.first, key.second, at});
  manifest["submitted"] = times;
  if (c.lms_points)
    manifest["lms_points"] = {{"column", c.lms_points->column},
                              {"points_possible", c.lms_points->possible},
                              {"accepted", c.lms_points->accepted}};
  // Only the exports that fit the class: a Canvas download has no Moodle
  // participants to fill moodle.csv's Identifier, a Moodle one no Canvas ids.
  // A refused or unfit export is not left behind from an earlier run either.
  const bool no_canvas = c.canvas_refused() || c.layout == "moodle", no_moodle = c.layout == "canvas";
  std::error_code gone;
  if (no_canvas) fs::remove(fs::path(out) / "canvas.csv", gone);
  if (no_moodle) fs::remove(fs::path(out) / "moodle.csv", gone);
  for (const auto& [name, text] :
       std::vector<std::pair<std::string, std::string>>{{"gradebook.csv", reports::gradebook_csv(c)},
                                                        {"canvas.csv", reports::canvas_csv(c)},
                                                        {"moodle.csv", reports::moodle_csv(c)},
                                                        {"checks.csv", reports::checks_csv(c)},
                                                        {"summary.json", reports::summary_json(c).dump(2, ' ', false, json::error_handler_t::replace) + "\n"},
                                                        {"summary.html", reports::summary_html(c)},
                                                        {"batch.json", manifest.dump(2, ' ', false, json::error_handler_t::replace) + "\n"}}) {
    if ((name == "canvas.csv" && no_canvas) || (name == "moodle.csv" && no_moodle)) continue;
    const std::string err = write_file_atomic((fs::path(out) / name).string(), text);
    if (!err.empty()) return err;
  }
  return write_feedback_zip(out, c);
}


void report_points(const reports::ClassResults& c, std::ostream& log) {
  if (!c.points_mismatch()) return;
  log << (c.lms_points->accepted ? "warning: " : "error: ") << "Canvas's points possible for \""
      << reports::visible(c.lms_points->column, false) << "\" (the roster) is " << points(c.lms_points->possible)
      << ", the rubrics total " << points(c.max_total()) << ": "
      << (c.lms_points->accepted ? "canvas.csv written anyway (--accept-points-mismatch)\n"
                                 : "canvas.csv not written. Make the rubric and the assignment agree, or pass "
                                   "--accept-points-mismatch to export anyway\n");
}

// Every student with no file at all, named at the end of the run (and in the summary).
void report_nothing_handed_in(const reports::ClassResults& c, std::ostream& log) {
  const std::vector<std::string> nothing = c.nothing_handed_in();
  std::string list;
  for (const auto& st : nothing) list += (list.empty() ? "" : ", ") + reports::visible(st, false);
  if (!nothing.empty())
    log << "no submission from " << nothing.size() << (nothing.size() == 1 ? " student: " : " students: ") << list << "\n";
}

}  // namespace grader
