// results.json as PrairieLearn's external grader reads it (/grade/results/
// results.json): gradable, a score from 0 to 1, a message, the output, one
// test per check with points and max_points, and the graph pictures of the
// HTML report as data: URIs. A submission that did not compile is still
// gradable (its score is 0, and the output says why); PrairieLearn's
// "gradable": false is for submissions the grader could not judge at all.
#include "reports/escape.h"
#include "reports/writer.h"
#include "text.h"

namespace reports {

std::string prairielearn_results(const std::vector<grader::Result>& results, const std::string& note, bool gradable) {
  grader::json j;
  double score = 0, max = 0;
  std::string output = note.empty() ? "" : visible(note) + "\n\n";
  grader::json tests = grader::json::array(), images = grader::json::array();
  for (const auto& r : results) {
    score += r.score;
    max += r.max_score;
    output += r.exercise + ": " + grader::points(r.score) + "/" + grader::points(r.max_score) + " (" + grader::name(r.verdict) + ")\n";
    const std::string why = run_text(r);
    if (!why.empty()) output += visible(why) + "\n";
    for (const auto& c : r.checks) {
      grader::json t;
      t["name"] = (results.size() > 1 ? r.exercise + ": " : "") + grader::shown_name(c);
      t["points"] = c.points;
      t["max_points"] = c.max;
      t["message"] = visible(c.status == grader::CheckStatus::NotRun ? "not run: " + c.message : c.status == grader::CheckStatus::Passed ? "passed" : c.message);
      t["output"] = visible(c.status == grader::CheckStatus::NotRun ? "" : check_text(c));
      tests.push_back(std::move(t));
    }
    // The pictures the HTML report draws (the student's graphs, and the
    // reference's beside a failed visible graph check).
    for (const auto& f : html_writer()->files(r))
      if (f.name.size() > 4 && f.name.compare(f.name.size() - 4, 4, ".png") == 0)
        images.push_back({{"label", r.exercise + ": " + f.name}, {"url", "data:image/png;base64," + base64(f.bytes)}});
  }
  j["gradable"] = gradable;
  j["score"] = max > 0 ? score / max : 0.0;
  j["message"] = visible(gradable ? "score " + grader::points(score) + "/" + grader::points(max) : note, false);
  j["output"] = output;
  j["tests"] = std::move(tests);
  j["images"] = std::move(images);
  return json_text(j, 2) + "\n";
}

}  // namespace reports
