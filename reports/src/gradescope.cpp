// results.json as Gradescope's autograder reads it
// (/autograder/results/results.json): the score, the time, a summary, and
// one test per check. A hidden check becomes "after_published": students see
// it once grades are published, and even then only that it passed or failed.
#include <cmath>

#include "reports/escape.h"
#include "reports/writer.h"
#include "text.h"

namespace reports {
namespace {

class GradescopeWriter : public Writer {
 public:
  std::string format() const override { return "gradescope"; }
  std::string file_name() const override { return "results.json"; }

  std::string render(const grader::Result& r) const override {
    grader::json j;
    j["score"] = r.score;
    j["max_score"] = r.max_score;
    j["execution_time"] = std::lround(r.total_seconds);
    std::string summary = r.exercise + " · " + r.title + "\nscore " + grader::points(r.score) + "/" + grader::points(r.max_score) +
                          " — " + r.verdict + "\n";
    const std::string why = run_text(r);
    if (!why.empty()) summary += "\n" + why;
    j["output"] = visible(summary);  // Gradescope shows it as text: no escapes reach the page
    j["stdout_visibility"] = "hidden";
    grader::json tests = grader::json::array();
    int number = 0;
    for (const auto& c : r.checks) {
      grader::json t;
      t["name"] = grader::shown_name(c);
      t["number"] = std::to_string(++number);
      t["score"] = c.points;
      t["max_score"] = c.max;
      t["status"] = c.status == "passed" ? "passed" : "failed";
      t["output"] = visible(c.status == "not_run" ? "not run: " + c.message : check_text(c));
      t["visibility"] = c.hidden ? "after_published" : "visible";
      tests.push_back(std::move(t));
    }
    j["tests"] = std::move(tests);
    return json_text(j, 2) + "\n";
  }
};

}  // namespace

std::unique_ptr<Writer> gradescope_writer() { return std::make_unique<GradescopeWriter>(); }

}  // namespace reports
