// junit.xml in the shape GitLab and GitHub's test-report actions read: one
// <testsuite> for the exercise, one <testcase> per check (classname = the
// exercise, name = the check). A check the program never got to is an
// <error> (the run ended abnormally: that is never a pass, and never a mere
// skip); a check that could not run here at all (a GPU check without a GPU)
// is <skipped>.
#include "reports/escape.h"
#include "reports/writer.h"
#include "text.h"

namespace reports {
namespace {

std::string attr(const std::string& name, const std::string& value) { return " " + name + "=\"" + xml_text(value) + "\""; }

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

class JunitWriter : public Writer {
 public:
  std::string format() const override { return "junit"; }
  std::string file_name() const override { return "junit.xml"; }

  std::string render(const grader::Result& r) const override {
    size_t failures = 0, errors = 0;
    for (const auto& c : r.checks) {
      failures += c.status == grader::CheckStatus::Failed;
      errors += c.status == grader::CheckStatus::NotRun;
    }
    // No check is ever skipped: one the run never reached is an error, with the reason.
    const std::string counts = attr("tests", std::to_string(r.checks.size())) + attr("failures", std::to_string(failures)) +
                               attr("errors", std::to_string(errors)) + attr("skipped", "0") +
                               attr("time", seconds3(r.total_seconds));
    std::string x = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    x += "<testsuites" + attr("name", "gradlab") + counts + ">\n";
    // JUnit's timestamp has no time zone: the UTC time without its "Z".
    const std::string stamp = r.created.empty() || r.created.back() != 'Z' ? r.created : r.created.substr(0, r.created.size() - 1);
    x += "  <testsuite" + attr("name", r.exercise) + counts + (stamp.empty() ? "" : attr("timestamp", stamp)) +
         (r.host.empty() ? "" : attr("hostname", r.host)) + ">\n";
    x += "    <properties>\n";
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"title", r.title},
                               {"submission", r.submission},
                               {"sha256", r.submission_sha256},
                               {"verdict", grader::name(r.verdict)},
                               {"score", grader::points(r.score)},
                               {"max_score", grader::points(r.max_score)},
                               {"engine", r.engine},
                               {"device", r.device}})
      x += "      <property" + attr("name", k) + attr("value", v) + "/>\n";
    if (!r.gpu.empty()) x += "      <property" + attr("name", "gpu") + attr("value", r.gpu) + "/>\n";
    x += "    </properties>\n";
    bool said_why = false;
    for (const auto& c : r.checks) {
      const std::string name = grader::shown_name(c);
      x += "    <testcase" + attr("classname", r.exercise) + attr("name", name) + attr("time", seconds3(0));
      if (c.status == grader::CheckStatus::Passed) {
        x += "/>\n";
        continue;
      }
      x += ">\n";
      if (c.status == grader::CheckStatus::Failed) {
        const std::string msg = c.hidden || c.message.empty() ? "failed" : first_line(c.message);
        x += "      <failure" + attr("message", msg) + attr("type", "check failed") + ">" + xml_text(check_text(c)) +
             "</failure>\n";
      } else {
        // Why is the same for every check the run never reached: in full in
        // the first one's <error> (test views show a case's text, not the
        // suite's system-err), and in <system-err>.
        const std::string why = said_why ? "" : run_text(r);
        said_why = true;
        x += "      <error" + attr("message", first_line(c.message)) + attr("type", grader::name(r.verdict)) +
             (why.empty() ? "/>\n" : ">" + xml_text(why) + "</error>\n");
      }
      x += "    </testcase>\n";
    }
    if (!r.run.stdout_text.empty())
      x += "    <system-out>" + xml_text(r.run.stdout_text) + (r.run.stdout_truncated ? "\n[output cut]" : "") +
           "</system-out>\n";
    const std::string err = r.verdict == grader::Verdict::CompileError || r.verdict == grader::Verdict::RuntimeError ? run_text(r) : r.run.stderr_text;
    if (!err.empty()) x += "    <system-err>" + xml_text(err) + "</system-err>\n";
    x += "  </testsuite>\n</testsuites>\n";
    return x;
  }
};

}  // namespace

std::unique_ptr<Writer> junit_writer() { return std::make_unique<JunitWriter>(); }

}  // namespace reports
