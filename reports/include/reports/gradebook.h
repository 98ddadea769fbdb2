// A class's results, and the files an instructor takes away from a batch:
// gradebook.csv (one row per student, for an LMS), checks.csv (one row per
// student and check), summary.json and summary.html (distributions and the
// most-failed checks). Every one is a pure function of the results, which
// are kept sorted, so the files do not depend on the order of grading.
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "reports/result.h"

namespace reports {

using grader::json;

struct ClassCheck {
  std::string id, name, status;
  double points = 0, max = 0;
};

// One student's result for one exercise, as its report.json says.
struct ClassEntry {
  grader::Verdict verdict = grader::Verdict::InternalError;
  double score = 0, max_score = 0;
  std::vector<ClassCheck> checks;
  std::string report;  // report.html, relative to the batch folder
  grader::RunStatus run_status = grader::RunStatus::NotRun;
  std::string isolation;   // the fence it ran in: bubblewrap or fallback ("" when not run)
};
ClassEntry entry_from_report(const json& report, const std::string& report_html);

// What a gradebook's verdict column says of one cell: missing (no file),
// passed or failed (it ran to its end: the words every report uses; the score
// says how well), compile_error, timeout (wall or CPU
// time), crashed (a signal, an exit, a memory or output limit), exception
// (one escaped the exercise's function), internal_error (the grader failed).
std::string gradebook_status(const ClassEntry* e);
// A gradebook status of a run that went to its end (passed, failed; "ok" in
// folders graded before the words were made one): the score says the rest.
bool ran_to_its_end(const std::string& status);

struct ClassResults;
// The total every class file shows: none for a student who handed in
// nothing, or whose files are held, so that no one reads it as earned.
std::string total_cell(const ClassResults& c, const std::string& student);
// A file held for a person (Verdict::SharedFile): it has no score yet.
bool held(const ClassEntry* e);

// Who a student is, as a roster or an LMS's download names them. Any field
// may be empty; `id` is the LMS's own user id (Canvas's ID), `sis_id` the
// institution's student number, `participant` Moodle's per-assignment
// participant number (from its download's folder names).
struct Identity {
  std::string name, id, sis_id, login, email, section, participant;
  bool empty() const { return (name + id + sis_id + login + email + section + participant).empty(); }
};

struct ClassExercise {
  std::string id, title;
  double max_score = 0;
};

// An entry of SUBMISSIONS that `grade batch` refused (a link, a fifo...) or
// took but flags (a hard link); `entry` is relative to SUBMISSIONS, visible.
struct IntakeNote {
  std::string entry, reason;
  bool refused = true;
};

// Two submissions to one exercise that share most of their code (beyond
// the starter's lines), for a person to look at: never a verdict.
struct SimilarPair {
  std::string exercise, a, b;  // students, a < b
  int percent = 0;             // how much of one consists of the other's material (the larger way)
  std::string page;            // the side-by-side page, relative to the class folder
};

// A score that differs from the one the last run left in the same --out
// folder (`grade batch` run again): before and after (none: no result now),
// their gradebook verdicts, and why, as the parts of the grade that differ:
// "grader", "rubric", "solution" (the reference), "facts", "file" (the
// student's), or "gone" (no file this time), "regrade" (graded again on
// request, nothing it depends on differs), "unknown" (the last run kept no
// record of its parts).
struct ScoreChange {
  std::string student, exercise;
  std::optional<double> before, after;
  std::string before_status, after_status;
  std::vector<std::string> why;
};
// A ScoreChange's reasons in words, for people: "the rubric changed; ...".
std::string change_reasons(const ScoreChange& c);

struct ClassResults {
  std::vector<ClassExercise> exercises;  // in the course's order
  std::vector<std::string> students;     // sorted; a student may have no entry for an exercise
  std::map<std::pair<std::string, std::string>, ClassEntry> entries;  // (student, exercise)
  std::vector<IntakeNote> intake;  // what the batch refused or flags, sorted by entry
  // A sharded class (`grade batch --shard K/N`): how many shards, and those a
  // merge went on without (--allow-partial), whose students are absent.
  int shards = 1;
  std::vector<int> missing_shards;
  // `grade batch --similarity`: the threshold used (0: not run) and the pairs at or above it.
  int similarity_threshold = 0;
  std::vector<SimilarPair> similar;
  // Who each student is (from --roster or the LMS's download), by student.
  std::map<std::string, Identity> identities;
  std::string layout;  // how SUBMISSIONS was read: folders, canvas, moodle, gradescope, github-classroom
  bool csv_bom = false;  // --bom: the CSV files start with a UTF-8 byte order mark (for Excel)
  std::string lms_assignment = "gradlab";  // the assignment column of canvas.csv
  std::vector<ScoreChange> changes;  // since the last run on the same folder
  // Files the LMS marked late (Canvas's _LATE_), as (student, exercise):
  // the mark is the instructor's to weigh, so it is kept, never acted on.
  std::set<std::pair<std::string, std::string>> late;
  // Each graded file's top-level entry as the LMS's download named it
  // (Canvas's file, Moodle's participant folder), by (student, exercise):
  // the names the LMS's bulk feedback upload matches reports by.
  std::map<std::pair<std::string, std::string>, std::string> lms_entries;
  // When each file was handed in, where the LMS says (UTC, ISO 8601), by
  // (student, exercise): kept beside the verdict, never acted on.
  std::map<std::pair<std::string, std::string>, std::string> submitted;
  bool is_late(const std::string& student, const std::string& exercise) const {
    return late.count({student, exercise}) > 0;
  }
  // canvas.csv's column as the roster (the LMS's own export) has it, with its
  // points possible; `accepted`: export even when they differ from the
  // rubrics' total (--accept-points-mismatch).
  struct LmsPoints {
    std::string column;
    double possible = 0;
    bool accepted = false;
  };
  std::optional<LmsPoints> lms_points;
  // The LMS's points possible differ from the rubrics' total.
  bool points_mismatch() const;
  // ...and nobody accepted it: canvas.csv is then not written.
  bool canvas_refused() const { return points_mismatch() && !lms_points->accepted; }

  const ClassEntry* find(const std::string& student, const std::string& exercise) const;
  double max_total() const;
  // A student with no file for any exercise: listed apart, left out of the statistics.
  bool submitted_nothing(const std::string& student) const;
  // Any of the student's files held: then the student has no total yet.
  bool any_held(const std::string& student) const;
  std::vector<std::string> nothing_handed_in() const;  // those students, in order
  const Identity& identity(const std::string& student) const;
};

// The generic gradebook: student (and the identity columns when any are
// known), then per exercise its score and verdict, then the total.
std::string gradebook_csv(const ClassResults& c);
// Canvas's gradebook import: Student, ID, SIS User ID, SIS Login ID, Section,
// one assignment column (lms_assignment) with the total, and a Points
// Possible row. A student with nothing submitted has an empty cell, which
// Canvas leaves as it was.
std::string canvas_csv(const ClassResults& c);
// Moodle's offline grading worksheet (Identifier "Participant N", Full name,
// Email address, Status, Grade, Maximum Grade, ..., Feedback comments), which
// the assignment's "Upload grading worksheet" and the gradebook's CSV import
// (mapping Email address) both read.
std::string moodle_csv(const ClassResults& c);
std::string checks_csv(const ClassResults& c);
json summary_json(const ClassResults& c);
std::string summary_html(const ClassResults& c);
// Two files side by side, the lines each shares with the other marked.
std::string similarity_html(const SimilarPair& p, const std::string& text_a, const std::string& text_b);

// How many of the most-failed checks the summaries list.
inline constexpr size_t kMostFailed = 10;

}  // namespace reports
