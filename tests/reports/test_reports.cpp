// The report writers, read back: report.json against its JSON Schema,
// junit.xml through a small XML reader, results.json as Gradescope reads
// it, and hostile text from a submission through all three.
#include "catch_compat.h"

#include <fstream>
#include <map>
#include <sstream>

#include "reports/escape.h"
#include "reports/writer.h"
#include "samples.h"

using grader::json;

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The JSON Schema keywords reports/report.schema.json uses: type (one or a
// list), enum, required, properties, additionalProperties: false, items and
// minimum. Returns the first violation as "path: what", or "".
std::string violation(const json& v, const json& schema, const std::string& path = "$") {
  if (schema.contains("type")) {
    auto is = [&](const std::string& t) {
      return t == "object" ? v.is_object() : t == "array" ? v.is_array() : t == "string" ? v.is_string()
           : t == "boolean" ? v.is_boolean() : t == "null" ? v.is_null() : t == "integer" ? v.is_number_integer()
           : t == "number" ? v.is_number() : false;
    };
    bool ok = false;
    if (schema["type"].is_array()) {
      for (const auto& t : schema["type"]) ok |= is(t.get<std::string>());
    } else {
      ok = is(schema["type"].get<std::string>());
    }
    if (!ok) return path + ": " + v.dump() + " is not of type " + schema["type"].dump();
  }
  if (schema.contains("enum")) {
    bool ok = false;
    for (const auto& e : schema["enum"]) ok |= e == v;
    if (!ok) return path + ": " + v.dump() + " is not one of " + schema["enum"].dump();
  }
  if (schema.contains("minimum") && v.is_number() && v.get<double>() < schema["minimum"].get<double>())
    return path + ": below the minimum";
  if (v.is_object()) {
    for (const auto& k : schema.value("required", json::array()))
      if (!v.contains(k.get<std::string>())) return path + ": missing " + k.get<std::string>();
    const json props = schema.value("properties", json::object());
    for (const auto& [k, x] : v.items()) {
      if (props.contains(k)) {
        if (auto e = violation(x, props[k], path + "." + k); !e.empty()) return e;
      } else if (schema.value("additionalProperties", true) == false) {
        return path + ": unexpected field " + k;
      }
    }
  }
  if (v.is_array() && schema.contains("items"))
    for (size_t i = 0; i < v.size(); ++i)
      if (auto e = violation(v[i], schema["items"], path + "[" + std::to_string(i) + "]"); !e.empty()) return e;
  return "";
}

// A small XML reader: elements, attributes, text, the five predefined
// entities and numeric references. Throws on anything not well formed.
struct Element {
  std::string name, text;
  std::map<std::string, std::string> attrs;
  std::vector<Element> children;
  std::vector<const Element*> all(const std::string& n) const {
    std::vector<const Element*> out;
    for (const auto& c : children) {
      if (c.name == n) out.push_back(&c);
      for (auto* d : c.all(n)) out.push_back(d);
    }
    return out;
  }
};

class XmlReader {
 public:
  explicit XmlReader(std::string s) : s_(std::move(s)) {}
  Element document() {
    if (s_.rfind("<?xml", 0) == 0) i_ = s_.find("?>") + 2;
    space();
    Element root = element();
    space();
    if (i_ != s_.size()) fail("text after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) { throw std::runtime_error("XML at " + std::to_string(i_) + ": " + what); }
  void space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  std::string decoded(const std::string& raw) {
    std::string out;
    for (size_t k = 0; k < raw.size(); ++k) {
      if (raw[k] == '<') fail("a raw < in text");
      if (raw[k] != '&') {
        out += raw[k];
        continue;
      }
      const size_t end = raw.find(';', k);
      if (end == std::string::npos) fail("an unterminated entity");
      const std::string ent = raw.substr(k + 1, end - k - 1);
      static const std::map<std::string, std::string> named = {{"amp", "&"}, {"lt", "<"}, {"gt", ">"}, {"quot", "\""}, {"apos", "'"}};
      if (named.count(ent)) {
        out += named.at(ent);
      } else if (ent.size() > 1 && ent[0] == '#') {
        const long cp = std::stol(ent.substr(1));
        if (cp >= 0x80) fail("a non-ASCII character reference this reader does not decode");
        out += static_cast<char>(cp);
      } else {
        fail("unknown entity &" + ent + ";");
      }
      k = end;
    }
    return out;
  }
  std::string name() {
    const size_t start = i_;
    while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '-' || s_[i_] == '_')) ++i_;
    if (i_ == start) fail("expected a name");
    return s_.substr(start, i_ - start);
  }
  Element element() {
    if (s_[i_] != '<') fail("expected <");
    ++i_;
    Element e;
    e.name = name();
    for (;;) {
      space();
      if (s_.compare(i_, 2, "/>") == 0) {
        i_ += 2;
        return e;
      }
      if (s_[i_] == '>') break;
      const std::string k = name();
      if (s_[i_] != '=' || s_[i_ + 1] != '"') fail("expected =\"");
      i_ += 2;
      const size_t end = s_.find('"', i_);
      if (end == std::string::npos) fail("an unterminated attribute");
      if (!e.attrs.emplace(k, decoded(s_.substr(i_, end - i_))).second) fail("attribute " + k + " twice");
      i_ = end + 1;
    }
    ++i_;
    for (;;) {
      const size_t lt = s_.find('<', i_);
      if (lt == std::string::npos) fail("unclosed <" + e.name + ">");
      e.text += decoded(s_.substr(i_, lt - i_));
      i_ = lt;
      if (s_.compare(i_, 2, "</") == 0) {
        i_ += 2;
        if (name() != e.name) fail("mismatched end tag for <" + e.name + ">");
        if (s_[i_++] != '>') fail("expected >");
        return e;
      }
      e.children.push_back(element());
    }
  }
  std::string s_;
  size_t i_ = 0;
};

using samples::check;
using samples::kHostile;

grader::Result failing() {
  grader::Result r;
  r.exercise = "exercise3", r.title = "The lab's exercise", r.submission = "exercises/exercise3.cpp";
  r.submission_sha256 = std::string(64, 'a');
  r.verdict = grader::Verdict::Failed, r.score = 3, r.max_score = 6;
  r.checks = {check("a", grader::CheckStatus::Passed, 2), check("b", grader::CheckStatus::Failed, 2), check("c", grader::CheckStatus::Failed, 1, true), check("d", grader::CheckStatus::Passed, 1)};
  r.checks[1].message = kHostile;
  r.compile.ok = true;
  r.run.status = grader::RunStatus::Ok, r.run.exit_code = 0, r.run.isolation = "bubblewrap";
  r.run.stdout_text = kHostile;
  r.warnings.push_back({{"message", "a warning"}, {"during", "exercise"}});
  r.engine = "gradlab 0.1.0", r.compiler = "g++ 12", r.total_seconds = 0.4125, r.created = "2026-11-22T00:00:00Z";
  r.host = "grader-7";
  return r;
}

grader::Result crashed() {
  grader::Result r = failing();
  r.verdict = grader::Verdict::RuntimeError, r.score = 0;
  r.run.status = grader::RunStatus::Timeout, r.run.exit_code = -1, r.run.signal = 9, r.run.message = "it ran past 5 s";
  r.run.stderr_text = kHostile;
  for (auto& c : r.checks) c.status = grader::CheckStatus::NotRun, c.points = 0, c.message = "the program did not finish";
  return r;
}

const json& schema() {
  static const json s = json::parse(slurp(GRADLAB_SOURCE_DIR "/reports/report.schema.json"));
  return s;
}

}  // namespace

TEST_CASE("report.json follows its schema, for every verdict", "[reports][json]") {
  for (const auto& r : {failing(), crashed()}) {
    const json j = json::parse(reports::json_writer()->render(r));
    CHECK(violation(j, schema()) == "");
  }
  const json t = json::parse(reports::json_writer()->render(crashed()));
  CHECK(t["run"]["timed_out"] == true);
  CHECK(t["run"]["limit_hit"] == "wall_time");
  // The schema validator itself rejects what it should.
  json bad = json::parse(reports::json_writer()->render(failing()));
  bad["verdict"] = "maybe";
  CHECK_THAT(violation(bad, schema()), Catch::Contains("$.verdict"));
  bad = json::parse(reports::json_writer()->render(failing()));
  bad["checks"][0].erase("hint");
  CHECK(violation(bad, schema()) == "$.checks[0]: missing hint");
}

TEST_CASE("the approved report.json files follow the schema", "[reports][json]") {
  for (const char* c : {"passing", "failing", "compile-error"}) {
    INFO(c);
    const json j = json::parse(slurp(std::string(GRADLAB_SOURCE_DIR "/tests/golden/reports/") + c + "/report.json"));
    CHECK(violation(j, schema()) == "");
  }
}

TEST_CASE("report.json keeps a submission's invalid UTF-8 as U+FFFD instead of failing", "[reports][json]") {
  const json j = json::parse(reports::json_writer()->render(failing()));
  const std::string out = j["run"]["stdout"];
  CHECK_THAT(out, Catch::Contains("bad:\xEF\xBF\xBD\xEF\xBF\xBD end"));
  CHECK(j["checks"][2]["expected"].is_null());  // hidden
}

TEST_CASE("junit.xml reads back with the counts, names and texts", "[reports][junit]") {
  const Element root = XmlReader(reports::junit_writer()->render(failing())).document();
  REQUIRE(root.name == "testsuites");
  auto suites = root.all("testsuite");
  REQUIRE(suites.size() == 1);
  const Element& s = *suites[0];
  CHECK(s.attrs.at("name") == "exercise3");
  CHECK(s.attrs.at("tests") == "4");
  CHECK(s.attrs.at("failures") == "2");
  CHECK(s.attrs.at("errors") == "0");
  CHECK(s.attrs.at("time") == "0.412");
  auto cases = s.all("testcase");
  REQUIRE(cases.size() == 4);
  CHECK(cases[0]->attrs.at("classname") == "exercise3");
  CHECK(cases[0]->attrs.at("name") == "check a");
  CHECK(cases[0]->children.empty());
  // The hostile message survives as text (minus the bytes XML cannot hold).
  const Element& f = cases[1]->children.at(0);
  CHECK(f.name == "failure");
  CHECK_THAT(f.attrs.at("message"), Catch::StartsWith("</failure>]]></pre><script>alert('x')</script> & \"q\""));
  CHECK_THAT(f.text, Catch::Contains("hint b"));
  // A hidden check says only that it failed.
  CHECK(cases[2]->attrs.at("name") == "hidden check c");
  CHECK(cases[2]->children.at(0).text == "hidden check: failed");
  CHECK_THAT(s.all("system-out").at(0)->text, Catch::Contains("bad:\xEF\xBF\xBD\xEF\xBF\xBD end"));
}

TEST_CASE("junit.xml reports a run that never reached the checks as errors, never as passes", "[reports][junit]") {
  const Element root = XmlReader(reports::junit_writer()->render(crashed())).document();
  const Element& s = *root.all("testsuite").at(0);
  CHECK(s.attrs.at("errors") == "4");
  CHECK(s.attrs.at("failures") == "0");
  for (const Element* c : s.all("testcase")) {
    REQUIRE(c->children.size() == 1);
    CHECK(c->children[0].name == "error");
    CHECK(c->children[0].attrs.at("type") == "runtime_error");
  }
  CHECK_THAT(s.all("system-err").at(0)->text, Catch::Contains("did not finish (timeout)"));
  // Where CI test views look: the first case that could not run says why in full.
  CHECK_THAT(s.all("testcase").at(0)->children[0].text, Catch::Contains("did not finish (timeout)"));
  CHECK(s.all("testcase").at(1)->children[0].text.empty());
  // When and where it was graded, as JUnit readers expect them.
  CHECK(s.attrs.at("timestamp") == "2026-11-22T00:00:00");
  CHECK(s.attrs.at("hostname") == "grader-7");
}

TEST_CASE("results.json has what Gradescope reads, and its tests add up to the score", "[reports][gradescope]") {
  for (const auto& r : {failing(), crashed()}) {
    const json j = json::parse(reports::gradescope_writer()->render(r));
    for (const char* k : {"score", "execution_time", "output", "output_format", "stdout_visibility", "tests"})
      CHECK(j.contains(k));
    CHECK(!j.contains("max_score"));  // not a field of Gradescope's specification: it adds up the tests'
    CHECK(j["output_format"] == "md");
    CHECK(j["execution_time"].get<long>() >= (r.total_seconds > 0 ? 1 : 0));
    double sum = 0, max = 0;
    for (const auto& t : j["tests"]) {
      for (const char* k : {"name", "number", "score", "max_score", "status", "output", "visibility"}) CHECK(t.contains(k));
      CHECK((t["status"] == "passed" || t["status"] == "failed"));
      CHECK((t["visibility"] == "visible" || t["visibility"] == "after_published"));
      sum += t["score"].get<double>();
      max += t["max_score"].get<double>();
    }
    CHECK(sum == j["score"].get<double>());
    CHECK(max == r.max_score);
  }
  const json c = json::parse(reports::gradescope_writer()->render(crashed()));
  CHECK_THAT(c["output"].get<std::string>(), Catch::Contains("did not finish (timeout)"));
  // Shown only once published, and then under its own name.
  CHECK(c["tests"][2]["visibility"] == "after_published");
  CHECK_THAT(c["tests"][2]["name"].get<std::string>(), Catch::StartsWith(crashed().checks[2].name));
  // Markdown outputs keep what a student printed in a code block, whatever its backticks.
  grader::Result tricky = failing();
  tricky.checks[0].status = grader::CheckStatus::Failed, tricky.checks[0].found = "```\n# not a heading";
  const json t = json::parse(reports::gradescope_writer()->render(tricky));
  const std::string out = t["tests"][0]["output"];
  CHECK(out.rfind("````text\n", 0) == 0);
  CHECK_THAT(out, Catch::EndsWith("\n````\n"));
}

TEST_CASE("results.json for a whole submission numbers each exercise's checks", "[reports][gradescope]") {
  const json j = json::parse(reports::gradescope_results({failing(), crashed()}, "graded 2 files"));
  CHECK(j["score"].get<double>() == failing().score + crashed().score);
  CHECK(j["tests"].size() == failing().checks.size() + crashed().checks.size());
  CHECK(j["tests"][0]["number"] == "1.1");
  CHECK(j["tests"][failing().checks.size()]["number"] == "2.1");
  CHECK_THAT(j["tests"][0]["name"].get<std::string>(), Catch::StartsWith(failing().exercise + ": "));
  CHECK_THAT(j["output"].get<std::string>(), Catch::StartsWith("graded 2 files"));
}

TEST_CASE("escaping: UTF-8 repair and XML text", "[reports][escape]") {
  using reports::valid_utf8;
  CHECK(valid_utf8("x² ·") == "x² ·");
  CHECK(valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");         // overlong '/'
  CHECK(valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
  CHECK(valid_utf8("\xE2\x82") == "\xEF\xBF\xBD\xEF\xBF\xBD");         // cut short
  CHECK(valid_utf8("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");         // U+1F600
  CHECK(reports::xml_text("a<b>&\"'\t\n\x01") == "a&lt;b&gt;&amp;&quot;&#39;\t\n\\x01");
}
