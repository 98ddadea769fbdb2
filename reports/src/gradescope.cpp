// results.json as Gradescope's autograder reads it
// (/autograder/results/results.json, its "Autograder Specifications"): the
// score, the time, a summary, and one test per check, for one exercise or
// for every exercise of a submission. Outputs are Markdown whose text sits
// in code blocks, so nothing a student wrote is ever read as Markdown or HTML.
// A hidden check is "after_published": students see it, under its own name,
// once the grades are published.
#include <cmath>

#include "reports/escape.h"
#include "reports/writer.h"
#include "text.h"

namespace reports {
namespace {

// Text as a fenced code block, with a fence longer than any run of
// backticks inside it.
std::string code_block(const std::string& text) {
  if (text.empty()) return "";
  size_t longest = 0, run = 0;
  for (char c : text) longest = std::max(longest, run = c == '`' ? run + 1 : 0);
  const std::string fence(std::max<size_t>(3, longest + 1), '`');
  return fence + "text\n" + visible(text) + (text.back() == '\n' ? "" : "\n") + fence + "\n";
}

std::string heading(const grader::Result& r) {
  return "**" + visible(r.exercise, false) + "** · " + visible(r.title, false) + ": " + grader::points(r.score) + "/" +
         grader::points(r.max_score) + " (" + grader::name(r.verdict) + ")\n";
}

}  // namespace

std::string gradescope_results(const std::vector<grader::Result>& results, const std::string& note) {
  grader::json j;
  double score = 0, seconds = 0;
  std::string output = note.empty() ? "" : visible(note) + "\n\n";
  grader::json tests = grader::json::array();
  for (size_t e = 0; e < results.size(); ++e) {
    const grader::Result& r = results[e];
    score += r.score;
    seconds += r.total_seconds;
    output += heading(r);
    const std::string why = run_text(r);  // a compile error or a run that did not finish: said once, at the top
    if (!why.empty()) output += code_block(why);
    output += "\n";
    int number = 0;
    for (const auto& c : r.checks) {
      grader::json t;
      t["name"] = (results.size() > 1 ? r.exercise + ": " : "") + c.name + (c.hidden ? " (hidden until published)" : "");
      t["number"] = std::to_string(e + 1) + "." + std::to_string(++number);
      t["score"] = c.points;
      t["max_score"] = c.max;
      t["status"] = c.status == grader::CheckStatus::Passed ? "passed" : "failed";
      t["output"] = code_block(c.status == grader::CheckStatus::NotRun ? "not run: " + c.message : check_text(c));
      t["output_format"] = "md";
      t["visibility"] = c.hidden ? "after_published" : "visible";
      tests.push_back(std::move(t));
    }
  }
  j["score"] = score;
  // Whole seconds, as the specification's example; a grade that took any
  // time at all is never said to have taken none.
  j["execution_time"] = static_cast<long>(std::ceil(seconds));
  j["output"] = output;
  j["output_format"] = "md";
  j["stdout_visibility"] = "hidden";
  j["tests"] = std::move(tests);
  return json_text(j, 2) + "\n";
}

namespace {

class GradescopeWriter : public Writer {
 public:
  std::string format() const override { return "gradescope"; }
  std::string file_name() const override { return "results.json"; }
  std::string render(const grader::Result& r) const override { return gradescope_results({r}, ""); }
};

}  // namespace

std::unique_ptr<Writer> gradescope_writer() { return std::make_unique<GradescopeWriter>(); }

}  // namespace reports
