// Each student's report, back through the LMS the class came from, as the
// LMS's own bulk feedback upload reads it:
//   Canvas   feedback-canvas.zip for "Re-Upload Submissions": one file per
//            graded file, named "<lastfirst>_<user id>_<attachment id>_<exercise>-report.html".
//            Canvas takes the first two all-digit parts of a name between
//            '_' as the user and the attachment it comments on, so each
//            report keeps the ids of the file it grades.
//   Moodle   feedback-moodle.zip for "Upload multiple feedback files in a
//            zip": "<Full Name>_<participant>_assignsubmission_file_/<exercise>-report.html",
//            the participant's folder as Moodle's download named it.
// Other layouts get no zip (their LMS has no such upload). Files of an
// anonymously graded Canvas assignment carry no user id, so Canvas could not
// match their reports: they are left out (SpeedGrader is the way there).
#pragma once
#include <ostream>
#include <string>

#include "reports/gradebook.h"

namespace grader {

// Writes OUT/feedback-canvas.zip or OUT/feedback-moodle.zip (entries sorted,
// fixed times: the same class gives the same bytes), or removes a stale
// one. Returns an error, or "".
std::string write_feedback_zip(const std::string& out, const reports::ClassResults& c);

// The name a report takes in the LMS's feedback zip for a file handed in as
// `entry` (its top-level name in the download); "" when the LMS could not
// match it to a student.
std::string feedback_name(const std::string& layout, const std::string& entry, const std::string& exercise);

}  // namespace grader
