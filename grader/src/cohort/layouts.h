// How each LMS lays out a download of submissions, and who handed in what.
// The files are not read here (intake.cpp does, through safe_dir.h); this
// only names, for each submitter, the folders and entries that are theirs.
//
//   folders           SUBMISSIONS/<student>/exercise3.cpp (by hand, a class's folder)
//   canvas            SUBMISSIONS/<lastfirst>[_LATE]_<user id>_<attachment id>_<file>, all in one folder
//                     (anonymous grading: [LATE_]anon_<anonymous id>_<attachment id>_<file>)
//   moodle            SUBMISSIONS/<Full Name>_<participant>_assignsubmission_file[_]/<file>
//                     (or the same prefix on each file, without folders)
//   gradescope        SUBMISSIONS/submission_metadata.yml and SUBMISSIONS/submission_<id>/<file>
//                     ("Export Submissions"; the metadata names each submission's submitters)
//   github-classroom  SUBMISSIONS/<assignment>-<login>/ (a clone per student), files in
//                     exercises/ as the student release has them, else at the top
#pragma once
#include <string>
#include <vector>

#include "reports/gradebook.h"

namespace grader {

enum class Layout { Auto, Folders, Canvas, Moodle, Gradescope, GithubClassroom };

// A time as an LMS writes it ("2026-11-01 10:00:00.000000000 -07:00",
// Gradescope's created_at) in UTC, ISO 8601 ("2026-11-01T17:00:00Z"); ""
// when it is not one.
std::string utc_time(const std::string& lms_time);
// Seconds since the epoch in UTC, ISO 8601.
std::string utc_time(int64_t seconds);

// "auto", "folders", ... -> Layout; throws std::invalid_argument naming the choices.
Layout parse_layout(const std::string& name);
// The LMS marked this top-level entry late (Canvas's "_LATE_" in a file's
// name, "LATE_anon_" under anonymous grading).
bool marked_late(Layout l, const std::string& entry);
std::string layout_name(Layout l);

// Where some of a submitter's files are: a folder (steps from SUBMISSIONS)
// and either every entry in it or only the named ones.
struct Source {
  std::vector<std::string> folder;
  bool whole = true;
  std::vector<std::string> names;  // when !whole
};

struct Submitter {
  std::string display;        // their name before any roster: folder, lastfirst, full name or login
  std::string folder;         // the top-level entry they came from, as matched against a roster
  std::string alias;          // the name the LMS spells for them (lastfirst, full name), matched as a name
  std::string tiebreak;       // told apart by it when two share a display name (an LMS id)
  reports::Identity identity;  // what the download says of them
  std::string submitted_at;    // when the LMS says they handed it in (UTC, ISO 8601), "" when it does not
  std::vector<Source> sources;
};

struct LayoutPlan {
  Layout layout = Layout::Folders;
  std::vector<Submitter> submitters;       // in the order of their entries
  std::vector<reports::IntakeNote> notes;  // top-level entries that belong to no one
};

struct LayoutOptions {
  std::string root_name;            // SUBMISSIONS's own name ("hw3-submissions" names the assignment)
  std::vector<std::string> logins;  // the roster's logins, which tell GitHub Classroom's prefix
};

// Reads the top of SUBMISSIONS (an open folder) and, for Auto, recognises
// the layout most of its entries fit. Throws std::invalid_argument for a
// Gradescope export whose metadata cannot be read.
LayoutPlan plan_layout(int rootfd, Layout requested, const LayoutOptions& o = {});

}  // namespace grader
