// A class's output folder, as `grade batch` writes it and `grade merge`
// reads and writes it: OUT/students/<student>/<exercise>/ (one grading's
// reports, then .key written last), and the class's files beside them.
#pragma once
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "reports/gradebook.h"
#include "reports/result.h"

namespace grader {

inline constexpr const char* kKeyFile = ".key";       // written last: its presence means "graded, complete"
inline constexpr const char* kErrorFile = "error.txt";  // the grader could not grade this one

// OUT/students/<student>/<exercise>
std::string slot(const std::string& out, const std::string& student, const std::string& exercise);

// The file's JSON, or null when it is missing or not JSON.
json read_json_or_null(const std::filesystem::path& p);

// The class as the files under OUT/students say it; students and exercises
// in the given (sorted, course) order.
reports::ClassResults collect(const std::string& out, const std::vector<std::string>& students,
                              const std::vector<reports::ClassExercise>& exercises);

// Writes the class's files into OUT: gradebook.csv, canvas.csv, moodle.csv,
// checks.csv, summary.json, summary.html and batch.json. `shards`: the shard
// numbers this folder holds (K of a `--shard K/N` run, or all a merge took),
// for `grade merge` to check; `options`: how the class was read and written,
// which every shard of one class must share. Returns an error, or "".
std::string write_class_files(const std::string& out, const reports::ClassResults& c, const std::vector<int>& shards,
                              const json& options);

// A student's identity as batch.json holds it.
reports::Identity identity_from(const json& j);

// Every student with no file at all, named at the end of the run (and in the summary).
void report_nothing_handed_in(const reports::ClassResults& c, std::ostream& log);
// Canvas's points possible (from the roster) against the rubrics' total, when they differ.
void report_points(const reports::ClassResults& c, std::ostream& log);

}  // namespace grader
