// The report writers: one per format, each a pure function from a grading
// result to the bytes of one file, so that the same result always gives the
// same file (apart from the fields a format documents as volatile) and each
// format can be tested on its own against a golden file.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "reports/result.h"

namespace reports {

// A file a writer produces, named relative to the report folder.
struct OutputFile {
  std::string name, bytes;
};

class Writer {
 public:
  virtual ~Writer() = default;
  // The format's name on the command line and in messages ("json", "junit").
  virtual std::string format() const = 0;
  // The file it writes into the report folder.
  virtual std::string file_name() const = 0;
  virtual std::string render(const grader::Result& r) const = 0;
  // Every file of the format: the main one, and any it refers to (the HTML
  // page's graph pictures). The grader writes exactly these.
  virtual std::vector<OutputFile> files(const grader::Result& r) const { return {{file_name(), render(r)}}; }
};

// report.json: the documented, versioned schema (reports/report.schema.json).
std::unique_ptr<Writer> json_writer();
// junit.xml: one testsuite per exercise, one testcase per check.
std::unique_ptr<Writer> junit_writer();
// results.json in Gradescope's autograder format.
std::unique_ptr<Writer> gradescope_writer();
// The same for a whole submission: every exercise's checks, numbered
// "exercise.check", with `note` (what was found, what was missing) on top.
std::string gradescope_results(const std::vector<grader::Result>& results, const std::string& note);
// PrairieLearn's external-grader results.json for a whole submission: the
// score as a fraction, a test per check, the graph pictures as data: URIs.
// `gradable` false: the grader could not judge it (`note` says why).
std::string prairielearn_results(const std::vector<grader::Result>& results, const std::string& note, bool gradable);
// report.html: one self-contained page (inline CSS, pictures embedded), and
// the graph pictures beside it as PNG files. `picture_cache`: a folder of
// pictures drawn before (render_png), or empty to draw each one.
std::unique_ptr<Writer> html_writer(const std::string& picture_cache = "");

// The schema version report.json declares; bumped on any incompatible change.
inline constexpr int kReportVersion = 1;

}  // namespace reports
