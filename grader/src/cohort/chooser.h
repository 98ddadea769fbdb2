// Which file of a submission is the student's exercise, read the way a TA
// reads a folder someone handed in: at any depth, inside an archive, in a
// subfolder named for the exercise, a later upload over an earlier one.
//
// gather() walks what the layout says is a submitter's (layouts.h: their
// folders, or their entries in a flat download), and collects every file
// named like an exercise of the course (exercise_named), breadth first (a
// crowded folder never hides the top's files), then reads the likeliest 50
// and opens the likeliest 10 archives (archives.h). choose() then takes one
// file per exercise, by these rules in order, and says of every file it
// passed over which rule decided:
//   1. a file that defines its own main() is a program of its own, taken
//      only when nothing else is named for the exercise;
//   2. the layout's preferred place first (a GitHub Classroom clone:
//      exercises/, where the student release puts the files);
//   3. a file handed in as itself before one inside an archive (an old zip
//      kept beside the work is a backup);
//   4. the top of the submission, then a conventional folder (exercises/,
//      src/, a folder named for the exercise, "Exercise 3/"), then elsewhere,
//      nearer the top first;
//   5. copies of one name: the latest upload where the LMS numbers them
//      (Moodle's "exercise3 (1).cpp", Canvas's "-1"), elsewhere the exact
//      name, then the highest copy number; different names: the one named
//      exactly for the exercise (not "old_exercise3.cpp");
//   6. the first by path.
// Of two members of one archive with one path, the later (as unpacking
// leaves it). At most 200 entries are listed per submission, then a count.
// Hidden entries (.git), macOS's __MACOSX/ and a committed gradlab-reports/
// (the grader's own output, never trusted from a student) are not read.
// Nothing here follows a link: every step is an openat() with O_NOFOLLOW.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "reports/gradebook.h"

namespace grader {

// The most of one source file that is read; a larger one is the student's
// verdict ("does not compile", with its size), not the grader's error.
constexpr uint64_t kMaxSubmissionBytes = uint64_t(1) << 20;

// The exercise a file is for, by its name as students and LMSs spell it:
// any letter case (Exercise3.cpp), a copy number (exercise3 (1).cpp, Canvas's
// exercise3-1.cpp) and a prefix ending in '_', '-' or ' ' (Canvas's
// lastfirst_12345_67890_exercise3.cpp); "" when none.
std::string exercise_named(const std::string& file, const std::vector<std::string>& exercises);

// A file named like an exercise, found in a submission.
struct Found {
  std::string exercise;
  std::string entry;  // its path from SUBMISSIONS; an archive's members under the archive's name ("hw.zip/src/exercise3.cpp")
  std::string name;   // its own name
  int source = 0;     // the layout's source it was found in (rule 2)
  int place = 0;      // 0: the top; 1: a conventional folder; 2: elsewhere (rule 3)
  int depth = 0;      // folders between the top and it
  bool archived = false;
  bool own_main = false;
  std::string text;   // its bytes (empty when too large, or not read)
  uint64_t size = 0;
  bool too_large = false;
  struct stat st {};  // a file on disk: what reading it saw (hard links); zeros for an archive's member
  int64_t mtime = 0;  // its modification time (on disk, or as its archive keeps it); 0: unknown
};

// An archive that was not opened (archives.h says why): the verdict of the
// exercise it is named for, or of every exercise nothing else was found for.
struct BadArchive {
  std::string entry, why;
  std::string exercise;  // "" when its name names no exercise ("hw3.zip")
};

struct Gathered {
  std::vector<Found> found;
  std::vector<reports::IntakeNote> notes;  // entries refused or worth a word, with why
  std::vector<BadArchive> bad_archives;
};

struct GatherOptions {
  bool read = true;         // false: names and stat() only, no archive opened (another shard's student)
  bool note_others = true;  // list top-level entries named like no exercise (false: a clone of the whole release)
  bool lms = false;         // Canvas or Moodle: names carry the LMS's prefix and its copy numbers
};

// Walks one of a submitter's sources: the folder `folder` (steps from
// `rootfd`), or only the entries `names` in it when `names` is not null.
// Folders in `skip` (steps from rootfd) are another source's and not walked.
void gather(int rootfd, const std::vector<std::string>& folder, const std::vector<std::string>* names, int source,
            const std::vector<std::string>& exercises, const std::set<std::vector<std::string>>& skip,
            const GatherOptions& o, Gathered& out);

struct Chosen {
  std::map<std::string, Found> files;       // exercise -> its file
  std::map<std::string, BadArchive> bad;    // exercise -> the archive that was its submission but could not be opened
  std::vector<reports::IntakeNote> notes;   // gather()'s, then every file passed over with the rule that decided
};

// One file per exercise of `exercises` (the rules above). `lms_numbers`:
// the layout's LMS numbers later uploads of the same name (Canvas, Moodle).
Chosen choose(Gathered g, const std::vector<std::string>& exercises, bool lms_numbers);

}  // namespace grader
