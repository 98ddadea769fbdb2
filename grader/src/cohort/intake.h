// What `grade batch` takes from SUBMISSIONS, and what it refuses. The folder
// is the students' (an unpacked archive, a clone), so nothing in it is
// trusted: no symbolic link is followed at any level (each step is an
// openat() with O_NOFOLLOW from the folder above), only regular files are
// read (no devices, fifos, sockets or folders), at most 1 MiB of each, and
// the bytes go to a private copy in the grader's cache, which is what gets
// compiled. Every entry that was refused is listed, with its reason, in the
// batch's summary.
//
// Hard links are taken, not refused, and listed as worth a look: a hard link
// names the same file as another name (no path to follow, nothing outside is
// reached by reading it), and instructors make them for good reasons
// (`cp -al` or `rsync --link-dest` snapshots of each deadline). Where two
// student files are one inode, the note names both, which is what an
// instructor needs to see a copy.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cohort/chooser.h"
#include "cohort/layouts.h"
#include "reports/gradebook.h"

namespace grader {

struct IntakeFile {
  std::string student;   // the student's safe name: their reports' folder and gradebook row
  std::string exercise;
  std::string shown;     // "SUBMISSIONS/<folder>/<exercise>.cpp" made visible: what reports call the file
  std::string text;      // the file's bytes (empty when too large)
  uint64_t size = 0;     // its size on disk
  bool too_large = false;
  // Other students' files that are this very file (hard links to its inode),
  // as their entries: the file is held, not graded (Verdict::SharedFile).
  std::vector<std::string> shared_with;
  bool late = false;  // the LMS marked it late (layouts.h, marked_late)
  bool archived = false;  // found inside an archive the student handed in (archives.h)
  std::string lms_entry;  // the top-level entry of SUBMISSIONS it came from, as the LMS named it
  // When it was handed in (UTC, ISO 8601), where the LMS says: Gradescope's
  // created_at; in a Canvas or Moodle download, the file's time as the
  // download keeps it (each LMS's zip carries the upload's time). "" elsewhere.
  std::string submitted;
  std::string bad_archive;  // non-empty: `shown` is an archive that could not be opened, and why (the verdict)
};

struct Intake {
  std::vector<std::string> students;      // safe names, sorted (the roster's students with no file too)
  std::map<std::string, reports::Identity> identities;  // by student, where the roster or the LMS told
  std::string layout;                     // how SUBMISSIONS was read (layout_name)
  std::vector<IntakeFile> files;          // by student, then exercise
  std::vector<reports::IntakeNote> notes;  // refused and suspicious entries, sorted by entry
};

// A name that is safe as a file name and in a report: control characters,
// bidi controls, '/' and '\' become '_', so do a leading '-', '.', '=', '+',
// '@' or blank and a trailing blank or '.'; at most 80 bytes. A name that had
// to change gets "~" and 8 hex digits of its hash, so two names never meet.
std::string safe_name(std::string_view raw);

struct IntakeOptions {
  Layout layout = Layout::Auto;                           // layouts.h
  const std::vector<reports::Identity>* roster = nullptr;  // --roster (roster.h), or none
};

// Reads each submitter's exercise files, as the layout places them (every
// student whose safe name `keep` accepts). With a roster, students are named
// by their row, those with no submission are students too, and a submission
// on no row is graded and noted. Throws std::invalid_argument when `root` is
// not a readable folder (or a Gradescope export's metadata is unreadable).
Intake take_submissions(const std::string& root, const std::vector<std::string>& exercises,
                        const std::function<bool(const std::string&)>& keep, const IntakeOptions& o = {});

// Writes the file's bytes to DIR/<hash of them>/<exercise>.cpp (owner-only)
// and returns that path; "" with `error` set when it cannot.
std::string private_copy(const std::string& dir, const IntakeFile& f, std::string& error);

// The student's verdict for a file over kMaxSubmissionBytes, or an archive
// that could not be opened.
std::string too_large_message(const IntakeFile& f);

}  // namespace grader
