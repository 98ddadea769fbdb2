// Variants at the course's level (variants.h has one exercise's): how many a
// course hands out, which one a student gets, the reference's facts at a
// variant, and `grade personalise`, which writes a student's own numbers
// into their exercise files.
#pragma once
#include <ostream>
#include <string>

#include "grade/console.h"
#include "course/course.h"

namespace grader {

// How many variants the course hands out: "count" in variants.json beside
// the rubrics (`grade release --variants N` writes it), 0 when there is none
// (everyone has the lesson's numbers).
int variant_count(const Course& course);

// The key a student's variant is derived from: their e-mail address, else
// their login (lowercased, spaces trimmed): every LMS's roster and
// Gradescope's submission metadata carry one of them.
std::string variant_key(const std::string& email_or_login);

// The variant of a student (0 when the course has none, or `key` is empty).
int student_variant(const Course& course, const std::string& key);

// The reference's facts for `exercise` at variant v: recorded (a release's
// variants/), else the reference solution run now (the course's own tree).
json reference_facts(const Course& course, const std::string& exercise, const Rubric& rubric, int v,
                     const GradeRequest& base);

// `grade personalise WHO`: the student's exercise files (found as `grade`
// finds them) get WHO's numbers in their statements; blanks and code stay.
// `variant` >= 0 picks one by number instead.
int personalise(std::ostream& os, const Course& course, const GradeRequest& base, const std::string& who, int variant,
                const Style& st);

}  // namespace grader
