// Hostile text on its way to a terminal or a report (issue 19): control
// characters made visible by reports::visible, in every writer that shows
// submitted text, and CSV cells that a spreadsheet cannot run as formulas.
#include "catch_compat.h"

#include "reports/escape.h"
#include "reports/gradebook.h"
#include "reports/writer.h"

using grader::json;

namespace {

// Every byte that could act on a terminal or reorder text: none may be left.
bool has_control(const std::string& s, bool allow_newline) {
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if ((c < 0x20 && !(allow_newline && (c == '\n' || c == '\t'))) || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < s.size() && static_cast<unsigned char>(s[i + 1]) <= 0x9F) return true;  // C1
    if (s.compare(i, 3, "\xE2\x80\xAE") == 0 || s.compare(i, 3, "\xE2\x81\xA6") == 0) return true;   // RLO, LRI
  }
  return false;
}

const std::string kFakeScore = "\x1b[2J\x1b[H\x1b[32mscore 18/18\x1b[0m\rpassed\b\b\x07\x9b" "31m\xE2\x80\xAEtxt.exe";

grader::Result hostile_result() {
  grader::Result r;
  r.exercise = "exercise3";
  r.title = "t";
  r.submission = "subs/eve\x1b[31m/exercise3.cpp";
  r.verdict = grader::Verdict::RuntimeError;
  r.max_score = 18;
  r.run.status = grader::RunStatus::Crashed;
  r.run.message = "killed" + kFakeScore;
  r.run.stdout_text = "line one\n" + kFakeScore + "\n";
  r.run.stderr_text = kFakeScore;
  r.compile.ok = true;
  r.compile.diagnostics = "warning: " + kFakeScore;
  grader::CheckResult c;
  c.id = "c1", c.name = "values", c.status = grader::CheckStatus::NotRun, c.max = 18, c.message = kFakeScore;
  r.checks.push_back(c);
  return r;
}

}  // namespace

TEST_CASE("visible(): every control, C1 and bidi character is shown as an escape", "[reports][escape]") {
  using reports::visible;
  CHECK(visible("plain x² · ✓") == "plain x² · ✓");
  CHECK(visible("\x1b[31mred") == "\\x1b[31mred");
  CHECK(visible("18/18\rfake") == "18/18\\rfake");
  CHECK(visible("ab\b\bX") == "ab\\x08\\x08X");
  CHECK(visible(std::string("nul\0x", 5)) == "nul\\x00x");
  CHECK(visible("del\x7F") == "del\\x7f");
  CHECK(visible("csi\xC2\x9B" "31m") == "csi\\x9b31m");              // U+009B, the 8-bit CSI
  CHECK(visible("a\xE2\x80\xAE" "b") == "a\\u202Eb");                // right-to-left override
  CHECK(visible("a\xE2\x81\xA6" "b\xE2\x81\xA9") == "a\\u2066b\\u2069");  // isolates
  CHECK(visible("a\xE2\x80\x8F") == "a\\u200F");                     // RTL mark
  CHECK(visible("bad \xFF byte") == "bad \xEF\xBF\xBD byte");
  // Lines and tabs stay in program output; on one line they are shown too.
  CHECK(visible("a\n\tb") == "a\n\tb");
  CHECK(visible("a\n\tb", false) == "a\\n\\tb");
  CHECK_FALSE(has_control(visible(kFakeScore, false), false));
}

TEST_CASE("CSV cells: formulas neutralised by their first non-blank character", "[reports][escape][gradebook]") {
  using reports::csv_field;
  CHECK(csv_field("=cmd|' /C calc'!A0") == "'=cmd|' /C calc'!A0");
  CHECK(csv_field(" =1+1") == "' =1+1");  // the apostrophe goes first, the blank is kept
  CHECK(csv_field("\t=1+1") == "'\\t=1+1");
  CHECK(csv_field("  +SUM(A1)") == "'  +SUM(A1)");
  CHECK(csv_field(" -2+3") == "' -2+3");
  CHECK(csv_field("-3.5 ") == "\"'-3.5 \"");  // a blank around it: not a plain number
  CHECK(csv_field("@SUM(1)") == "'@SUM(1)");
  CHECK(csv_field("\r=1") == "'\\r=1");
  CHECK(csv_field("-1+2") == "'-1+2");  // arithmetic is a formula, not a number
  CHECK(csv_field("-") == "'-");
  // Numbers stay numbers.
  CHECK(csv_field("-3.5") == "-3.5");
  CHECK(csv_field("+2") == "+2");
  CHECK(csv_field("1e3") == "1e3");
  // Separators and quotes are quoted (';' for the locales that split on it).
  CHECK(csv_field("a;b") == "\"a;b\"");
  CHECK(csv_field("a,b") == "\"a,b\"");
  CHECK(csv_field("=a,\"b\"") == "\"'=a,\"\"b\"\"\"");
  // Control characters never reach the file.
  CHECK(csv_field("eve\x1b[2J\r\n") == "eve\\x1b[2J\\r\\n");
}

TEST_CASE("a gradebook of hostile names has one safe cell per name", "[reports][gradebook]") {
  reports::ClassResults c;
  c.exercises = {{"exercise1", "t", 10}};
  c.students = {" =HYPERLINK(\"http://x\")", "\t@SUM(1)", "a;b", "eve\n,99", "mallory\x1b[2K"};
  const std::string csv = reports::gradebook_csv(c);
  CHECK_THAT(csv, Catch::Contains("\"' =HYPERLINK(\"\"http://x\"\")\""));
  CHECK_THAT(csv, Catch::Contains("'\\t@SUM(1)"));
  CHECK_THAT(csv, Catch::Contains("\"a;b\""));
  CHECK_THAT(csv, Catch::Contains("\"eve\\n,99\""));
  CHECK_THAT(csv, Catch::Contains("mallory\\x1b[2K"));
  // One header and one row per student: no name started a row of its own.
  size_t rows = 0;
  for (size_t at = 0; (at = csv.find("\r\n", at)) != std::string::npos; at += 2) ++rows;
  CHECK(rows == 6);
  CHECK(csv.find('\x1b') == std::string::npos);
}

TEST_CASE("every writer shows a program's escapes instead of passing them on", "[reports][escape]") {
  const grader::Result r = hostile_result();
  for (const auto& w : {reports::html_writer(), reports::junit_writer(), reports::gradescope_writer()}) {
    INFO(w->format());
    const std::string out = w->render(r);
    CHECK_FALSE(has_control(out, true));
    CHECK(out.find("\\x1b[32mscore 18/18") != std::string::npos);
  }
  // report.json keeps the text as it was: JSON escapes it (\u001b), nothing raw.
  const std::string j = reports::json_writer()->render(r);
  CHECK(j.find('\x1b') == std::string::npos);
  CHECK(j.find("\\u001b[32mscore 18/18") != std::string::npos);
}

TEST_CASE("summary.json and summary.html list the refused entries with their reasons", "[reports][gradebook]") {
  reports::ClassResults c;
  c.exercises = {{"exercise1", "t", 10}};
  c.students = {"alice"};
  c.intake = {{"mallory/exercise1.cpp", "a symbolic link (to ../alice/exercise1.cpp): only regular files are graded", true},
              {"bob/exercise1.cpp", "a hard link (2 names share this file)", false}};
  const json j = reports::summary_json(c);
  REQUIRE(j["intake"].size() == 2);
  CHECK(j["intake"][0]["entry"] == "mallory/exercise1.cpp");
  CHECK(j["intake"][0]["refused"] == true);
  const std::string html = reports::summary_html(c);
  CHECK_THAT(html, Catch::Contains("<code>mallory/exercise1.cpp</code></td><td>refused</td>"));
  CHECK_THAT(html, Catch::Contains("<td>graded</td><td>a hard link"));
}
