// The class files from hand-made results, read back: gradebook.csv and
// checks.csv through an RFC 4180 reader, summary.json's statistics against
// the same numbers computed here, and summary.html's escaping and links.
#include "catch_compat.h"

#include "reports/escape.h"
#include "reports/gradebook.h"

using grader::json;

namespace {

// RFC 4180: CRLF-separated records, fields quoted when they hold a comma,
// quote or line break, quotes doubled inside. Throws on a malformed quote.
std::vector<std::vector<std::string>> read_csv(const std::string& s) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row;
  std::string field;
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] == '"') {
      for (++i;; ++i) {
        if (i >= s.size()) throw std::runtime_error("an unterminated quote");
        if (s[i] == '"') {
          if (i + 1 < s.size() && s[i + 1] == '"') {
            field += '"', ++i;
            continue;
          }
          ++i;
          break;
        }
        field += s[i];
      }
      if (i < s.size() && s[i] != ',' && s[i] != '\r') throw std::runtime_error("text after a closing quote");
    } else if (s[i] == ',') {
      row.push_back(field), field.clear(), ++i;
    } else if (s.compare(i, 2, "\r\n") == 0) {
      row.push_back(field), field.clear();
      rows.push_back(row), row.clear();
      i += 2;
    } else {
      field += s[i++];
    }
  }
  if (!field.empty() || !row.empty()) throw std::runtime_error("the last record has no CRLF");
  return rows;
}

reports::ClassEntry entry(const std::string& verdict, double score, std::vector<std::pair<std::string, bool>> checks) {
  reports::ClassEntry e;
  e.verdict = grader::verdict_named(verdict).value(), e.score = score, e.max_score = 4;
  for (const auto& [id, passed] : checks)
    e.checks.push_back({id, "check " + id + ", \"quoted\"", passed ? "passed" : "failed", passed ? 2.0 : 0.0, 2});
  return e;
}

reports::ClassResults sample() {
  reports::ClassResults c;
  c.exercises = {{"exercise1", "First", 4}, {"exercise2", "Second", 4}};
  c.students = {"=cmd()", "ann", "bo, \"b\"", "cy"};
  c.entries[{"=cmd()", "exercise1"}] = entry("failed", 2, {{"a", true}, {"b", false}});
  c.entries[{"ann", "exercise1"}] = entry("passed", 4, {{"a", true}, {"b", true}});
  c.entries[{"ann", "exercise2"}] = entry("failed", 0, {{"c", false}, {"d", false}});
  c.entries[{"ann", "exercise2"}].run_status = grader::RunStatus::CpuLimit;
  c.entries[{"bo, \"b\"", "exercise1"}] = entry("failed", 2, {{"a", true}, {"b", false}});
  c.entries[{"bo, \"b\"", "exercise1"}].run_status = grader::RunStatus::Crashed;
  c.entries[{"bo, \"b\"", "exercise2"}] = entry("compile_error", 0, {});
  for (auto& [k, e] : c.entries) e.report = "students/" + k.first + "/" + k.second + "/report.html";
  return c;  // cy submitted nothing
}

}  // namespace

TEST_CASE("gradebook.csv reads back: one row per student, empty cells for missing files", "[reports][gradebook]") {
  const auto rows = read_csv(reports::gradebook_csv(sample()));
  REQUIRE(rows.size() == 5);
  CHECK(rows[0] ==
        std::vector<std::string>{"student", "exercise1", "exercise1 verdict", "exercise2", "exercise2 verdict", "total"});
  CHECK(rows[1] == std::vector<std::string>{"'=cmd()", "2", "failed", "", "missing", "2"});  // not a formula in a spreadsheet
  CHECK(rows[2] == std::vector<std::string>{"ann", "4", "passed", "0", "timeout", "4"});
  CHECK(rows[3] == std::vector<std::string>{"bo, \"b\"", "2", "crashed", "0", "compile_error", "2"});
  // Nothing handed in: no score and no total, never a 0 that looks earned.
  CHECK(rows[4] == std::vector<std::string>{"cy", "", "missing", "", "missing", ""});
}

TEST_CASE("each verdict a gradebook can say", "[reports][gradebook]") {
  CHECK(reports::gradebook_status(nullptr) == "missing");
  // Read from report.json's words, as a merge reads other shards' reports.
  auto read = [](const std::string& verdict, const std::string& run) {
    json r = {{"verdict", verdict}, {"score", 0}};
    if (!run.empty()) r["run"] = {{"status", run}};
    return reports::entry_from_report(r, "report.html");
  };
  for (auto [run, want] : std::vector<std::pair<std::string, std::string>>{
           {"ok", "failed"}, {"timeout", "timeout"}, {"cpu_limit", "timeout"}, {"exception", "exception"},
           {"crashed", "crashed"}, {"memory_limit", "crashed"}, {"output_limit", "crashed"}, {"bad_snapshot", "crashed"},
           {"", "failed"}, {"a word of no status", "crashed"}}) {
    const reports::ClassEntry e = read("failed", run);
    CHECK(reports::gradebook_status(&e) == want);
  }
  const reports::ClassEntry compile = read("compile_error", "not_run"), internal = read("internal_error", "");
  CHECK(reports::gradebook_status(&compile) == "compile_error");
  CHECK(reports::gradebook_status(&internal) == "internal_error");
  // A verdict no grader writes is the grader's failure, never the first word of the list (passed).
  CHECK(read("passd", "ok").verdict == grader::Verdict::InternalError);
  CHECK(read("passed", "ok").verdict == grader::Verdict::Passed);
  // The words of every report: a run to its end is passed or failed, as report.json says.
  const reports::ClassEntry passed = read("passed", "ok");
  CHECK(reports::gradebook_status(&passed) == "passed");
  CHECK(reports::ran_to_its_end("passed"));
  CHECK(reports::ran_to_its_end("failed"));
  CHECK_FALSE(reports::ran_to_its_end("timeout"));
}

TEST_CASE("with identities: the generic gradebook, Canvas's import and Moodle's worksheet", "[reports][gradebook]") {
  reports::ClassResults c = sample();
  c.identities["ann"] = {"Ann Ó Briain", "1001", "S1", "ann", "ann@x.edu", "Tue", "555"};
  c.identities["cy"] = {"Cy Doe", "1004", "", "", "", "Wed", ""};
  c.lms_assignment = "Homework 3 (42)";
  const auto g = read_csv(reports::gradebook_csv(c));
  CHECK(g[0] == std::vector<std::string>{"student", "name", "id", "sis_id", "login", "email", "section", "exercise1",
                                         "exercise1 verdict", "exercise2", "exercise2 verdict", "total"});
  CHECK(g[2] == std::vector<std::string>{"ann", "Ann Ó Briain", "1001", "S1", "ann", "ann@x.edu", "Tue", "4", "passed", "0",
                                         "timeout", "4"});
  const auto canvas = read_csv(reports::canvas_csv(c));
  CHECK(canvas[0] == std::vector<std::string>{"Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Homework 3 (42)"});
  CHECK(canvas[1] == std::vector<std::string>{"Points Possible", "", "", "", "", "8"});
  CHECK(canvas[3] == std::vector<std::string>{"Ann Ó Briain", "1001", "S1", "ann", "Tue", "4"});
  CHECK(canvas[5] == std::vector<std::string>{"Cy Doe", "1004", "", "", "Wed", ""});  // left as Canvas has it
  const auto moodle = read_csv(reports::moodle_csv(c));
  CHECK(moodle[0] == std::vector<std::string>{"Identifier", "Full name", "Email address", "Status", "Grade",
                                              "Maximum Grade", "Grade can be changed", "Last modified (submission)",
                                              "Last modified (grade)", "Feedback comments"});
  CHECK(moodle[2] == std::vector<std::string>{"Participant 555", "Ann Ó Briain", "ann@x.edu", "Submitted for grading", "4",
                                              "8", "Yes", "", "", "exercise1: 4/4 (passed); exercise2: 0/4 (timeout)"});
  CHECK(moodle[4][3] == "No submission");
  CHECK(moodle[4][4] == "");
  c.csv_bom = true;
  for (const auto& text : {reports::gradebook_csv(c), reports::canvas_csv(c), reports::moodle_csv(c), reports::checks_csv(c)}) {
    CHECK(text.compare(0, 3, "\xEF\xBB\xBF") == 0);
    CHECK(read_csv(text.substr(3)).size() >= 5);
  }
}

TEST_CASE("checks.csv reads back: one row per student and check", "[reports][gradebook]") {
  const auto rows = read_csv(reports::checks_csv(sample()));
  REQUIRE(rows.size() == 1 + 2 + 2 + 2 + 2);
  CHECK(rows[0] == std::vector<std::string>{"student", "exercise", "verdict", "check", "name", "status", "points", "max"});
  CHECK(rows[7] == std::vector<std::string>{"bo, \"b\"", "exercise1", "failed", "a", "check a, \"quoted\"", "passed", "2", "2"});
  for (const auto& r : rows) CHECK(r.size() == 8);
}

TEST_CASE("summary.json's statistics and most-failed checks", "[reports][gradebook]") {
  const json j = reports::summary_json(sample());
  CHECK(j["students"] == 4);
  const json& e1 = j["exercises"][0];
  CHECK(e1["submitted"] == 3);
  CHECK(e1["mean"].get<double>() == Approx(8.0 / 3).epsilon(1e-3));
  CHECK(e1["median"] == 2.0);
  // 2 of 4 is the 50% bin; 4 of 4, full marks, has the last bin to itself.
  CHECK(e1["histogram"] == json::parse("[0,0,0,0,0,2,0,0,0,0,1]"));
  CHECK(e1["verdicts"]["passed"] == 1);
  CHECK(j["exercises"][1]["verdicts"]["compile_error"] == 1);
  // cy handed in nothing: named apart, and not a 0 in the totals (2, 2, 4).
  CHECK(j["submitted_nothing"] == json::parse(R"(["cy"])"));
  CHECK(e1["missing"] == 1);
  CHECK(j["exercises"][1]["missing"] == 2);
  CHECK(j["exercises"][1]["gradebook_verdicts"] == json::parse(R"({"compile_error": 1, "timeout": 1})"));
  CHECK(j["total"]["students"] == 3);
  CHECK(j["total"]["median"] == 2.0);
  CHECK(j["total"]["mean"].get<double>() == Approx(8.0 / 3).epsilon(1e-3));
  CHECK(j["total"]["max_score"] == 8.0);
  // b failed by two students comes first; ties keep the course's order.
  REQUIRE(j["most_failed"].size() == 3);
  CHECK(j["most_failed"][0]["check"] == "b");
  CHECK(j["most_failed"][0]["students"] == json::parse(R"x(["=cmd()", "bo, \"b\""])x"));
  CHECK(j["most_failed"][1]["check"] == "c");
}

TEST_CASE("summary.json and summary.html list the scores a rerun changed, and why", "[reports][gradebook]") {
  reports::ClassResults c = sample();
  CHECK(reports::summary_json(c)["changes"] == json::array());
  CHECK_THAT(reports::summary_html(c), !Catch::Contains("id=\"changes\""));
  c.changes.push_back({"<b>o", "exercise1", 2.0, 3.0, "ok", "ok", {"rubric", "facts"}});
  c.changes.push_back({"cy", "exercise2", 1.0, std::nullopt, "timeout", "", {"gone"}});
  const json j = reports::summary_json(c)["changes"];
  REQUIRE(j.size() == 2);
  CHECK(j[0] == json::parse(R"({"student": "<b>o", "exercise": "exercise1", "before": 2.0, "after": 3.0,
                                "before_verdict": "ok", "after_verdict": "ok", "why": ["rubric", "facts"]})"));
  CHECK(j[1]["after"].is_null());
  const std::string html = reports::summary_html(c);
  CHECK_THAT(html, Catch::Contains("2 scores differ from what this folder held before"));
  CHECK_THAT(html, Catch::Contains("<td>&lt;b&gt;o</td>"));
  CHECK_THAT(html, Catch::Contains("the rubric changed; the recorded facts changed"));
  CHECK_THAT(html, Catch::Contains("1 (timeout)</td><td class=\"n\">none</td><td>no file this time"));
  // Said before the statistics: above the most-failed checks.
  CHECK(html.find("id=\"changes\"") < html.find("The most failed checks"));
}

TEST_CASE("summary: full marks have a bin of their own, a near miss is in the 90% bin; plurals", "[reports][gradebook]") {
  reports::ClassResults c;
  c.exercises = {{"exercise1", "First", 100}};
  c.students = {"a", "b"};
  c.entries[{"a", "exercise1"}] = entry("passed", 100, {});
  c.entries[{"b", "exercise1"}] = entry("failed", 99.5, {});
  CHECK(reports::summary_json(c)["exercises"][0]["histogram"] == json::parse("[0,0,0,0,0,0,0,0,0,1,1]"));
  const std::string html = reports::summary_html(c);
  CHECK_THAT(html, Catch::Contains("2 students, 1 exercise</h1>"));
  CHECK_THAT(html, Catch::Contains("1 in 90–100%, 1 in full marks"));
}

TEST_CASE("summary.html's students: verdicts beside scores, no total for who handed in nothing", "[reports][gradebook]") {
  reports::ClassResults c = sample();
  c.identities["ann"].name = "Ann <Lee>";
  const std::string html = reports::summary_html(c);
  const auto row = [&](const std::string& who) {
    const size_t at = html.find("<tr><td>" + who);
    REQUIRE(at != std::string::npos);
    return html.substr(at, html.find("</tr>", at) - at);
  };
  // cy: no file at all, so no total, as in gradebook.csv (never a 0 earned).
  CHECK(row("cy") == "<tr><td>cy</td><td class=\"n\">–</td><td class=\"n\">–</td><td class=\"n\">–</td>");
  CHECK_THAT(row("bo, &quot;b&quot;"), Catch::Contains(">0</a> <span class=\"sub\">compile_error</span>"));
  CHECK_THAT(row("bo, &quot;b&quot;"), Catch::Contains(">2</a> <span class=\"sub\">crashed</span>"));
  CHECK_THAT(row("ann"), Catch::Contains("ann <span class=\"sub\">Ann &lt;Lee&gt;</span>"));
  CHECK_THAT(row("ann"), Catch::Contains(">0</a> <span class=\"sub\">timeout</span></td><td class=\"n\">4</td>"));
}

TEST_CASE("summary.html escapes names and links each student's report", "[reports][gradebook]") {
  const std::string html = reports::summary_html(sample());
  CHECK_THAT(html, Catch::Contains("href=\"students/bo%2C%20%22b%22/exercise1/report.html\""));
  CHECK_THAT(html, Catch::Contains(">bo, &quot;b&quot;</a>"));
  CHECK_THAT(html, Catch::Contains("<svg class=\"chart\""));
  CHECK_THAT(html, Catch::Contains("aria-label=\"Students by total score: 0 in 0–10%, 0 in 10–20%, 2 in 20–30%"));
  CHECK_THAT(html, Catch::Contains("id=\"nothing\"") && Catch::Contains("<span>cy</span>"));
  CHECK_THAT(html, !Catch::Contains("<script"));
}

TEST_CASE("CSV fields: quoting and formula guard", "[reports][escape]") {
  CHECK(reports::csv_field("plain") == "plain");
  CHECK(reports::csv_field("a,b") == "\"a,b\"");
  CHECK(reports::csv_field("say \"hi\"") == "\"say \"\"hi\"\"\"");
  // A line break in a name would start a fake row in a careless reader: it is shown, not kept.
  CHECK(reports::csv_field("two\nlines") == "two\\nlines");
  CHECK(reports::csv_field("-3.5") == "-3.5");
  CHECK(reports::csv_field("+SUM(A1)") == "'+SUM(A1)");
  CHECK(reports::csv_field("@x") == "'@x");
}
