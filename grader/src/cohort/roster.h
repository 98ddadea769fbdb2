// `grade batch --roster FILE`: who is in the class, from a CSV an instructor
// already has (their own, or the LMS's export). Each student on it gets a
// gradebook row, those who handed in nothing too; a submission that matches
// no one is graded and listed as "not on the roster".
//
// Columns are found by their header, in any case and order. Recognised:
//   name:    name, full name, student (Canvas), or first name + last name/surname (Moodle)
//   id:      id (the LMS's own user id: Canvas's ID, as its download's file
//            names carry it and canvas.csv writes it back; not a student number)
//   sis_id:  sis_id, sis user id, student id, student number, sid, id number, identifier (GitHub
//            Classroom's; moved to email when it is one)
//   login:   login, username, sis login id, github_username, github
//   email:   email, email address, e-mail
//   section: section, group
// At least one of id, sis_id, login, email or name is needed.
#pragma once
#include <optional>
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

// An assignment column of an LMS's gradebook export used as the roster
// (Canvas's "Homework 3 (1234)"), and the number its Points Possible row
// holds there, when it has one.
struct LmsColumn {
  std::string name;
  std::optional<double> points_possible;
};
// The column named `wanted`; with `wanted` empty, the one column named as
// Canvas names assignments ("NAME (DIGITS)") when there is exactly one.
// Nothing when there is no such column. For a file read_roster accepted.
std::optional<LmsColumn> lms_column(const std::string& path, const std::string& wanted);

// A submission's roster row, by the strongest evidence that names exactly
// one: tier 1, what the LMS says of them (id, SIS id, login, email); 2, the
// folder's name equal to one of those; 3, the same in any case, or the
// email's local part; 4, their name as the LMS spells it (`alias`: Canvas's
// "doejane" meets "Doe, Jane" and "Jane Doe"). Where a tier names several
// rows, they are `tied` and none is taken.
struct RosterMatch {
  int row = -1;   // -1: none
  int tier = 0;   // 1 (strongest) to 4; 0 when nothing matched
  std::vector<int> tied;
};
RosterMatch match_roster(const std::vector<reports::Identity>& roster, const reports::Identity& who,
                         const std::string& folder, const std::string& alias);

}  // namespace grader
