// `grade batch --roster FILE`: who is in the class, from a CSV an instructor
// already has (their own, or the LMS's export). Each student on it gets a
// gradebook row, those who handed in nothing too; a submission that matches
// no one is graded and listed as "not on the roster".
//
// Columns are found by their header, in any case and order. Recognised:
//   name:    name, full name, student (Canvas), or first name + last name/surname (Moodle)
//   id:      id (Canvas's user id, as its download's file names carry it)
//   sis_id:  sis user id, student id, student number, sid, id number, identifier (GitHub Classroom)
//   login:   login, username, sis login id, github_username, github
//   email:   email, email address, e-mail
//   section: section, group
// At least one of id, sis_id, login, email or name is needed.
#pragma once
#include <string>
#include <vector>

#include "reports/gradebook.h"

namespace grader {

// RFC 4180 records (CRLF or LF, quoted fields with "" inside, a leading
// UTF-8 byte order mark skipped). Throws std::invalid_argument naming the
// line of a malformed quote.
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& what);

// Throws std::invalid_argument, saying where and what, for a file that
// cannot be read, has no usable header, or a row with no identity.
std::vector<reports::Identity> read_roster(const std::string& path);

// What a submission tells of its author (from the LMS's names), matched
// against the roster: by an identifier first (id, sis_id, login, email; the
// folder's name against each of them, or ending in "-login" as GitHub
// Classroom names repositories), by the name only when no identifier
// matched. Returns the row's index, -1 when none; `ambiguous` is set when
// more than one row matched equally well (then none is taken).
int match_roster(const std::vector<reports::Identity>& roster, const reports::Identity& who,
                 const std::string& folder, bool& ambiguous);

}  // namespace grader
