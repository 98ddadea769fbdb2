// Recorded facts and the student release: what a facts file keeps, when it
// no longer holds, what a public rubric leaves out, and how answer lines are
// found in a tree.
#include "catch_compat.h"

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "judge/facts.h"
#include "common/files.h"
#include "course/release.h"
#include "judge/rubric.h"

namespace fs = std::filesystem;
using grader::json;

namespace {

const json kRubric = json::parse(R"({
  "rubric": 1, "exercise": "ex", "title": "t", "function": "ex",
  "probes": [{"id": "again", "kind": "backward", "tensor": "f", "retain_graph": false}],
  "diagnoses": [{"check": "w-leaf", "when": [{"probe": "again", "ok": true}], "hint": "about w"},
                {"check": "f-value", "when": [{"check": "w-leaf", "status": "failed"}], "hint": "names w-leaf"},
                {"check": "f-value", "when": [{"probe": "again", "ok": true}], "hint": "kept"}],
  "checks": [
    {"id": "f-value", "kind": "value", "tensor": "f", "name": "f"},
    {"id": "f-graph", "kind": "graph", "tensor": "f", "name": "graph", "points": 2},
    {"id": "again", "kind": "probe", "probe": "again", "expect": "error", "name": "probe"},
    {"id": "w-leaf", "kind": "is_leaf", "tensor": "w", "name": "w is a leaf", "points": 3, "visibility": "hidden"}
  ]})");

json snapshot() {
  return json::parse(R"({
    "nonce": "abc", "status": "ok", "usage": {"cpu_seconds": 0.1},
    "tensors": {"f": {"values": [18.0]}, "q": {"values": [6.0]}, "w": {"is_leaf": true}, "other": {"values": [1.0]}},
    "graphs": {"f": [{"id": "n0", "name": "MulBackward0", "tensors": ["f"], "next": ["n1"]},
                     {"id": "n1", "name": "AddBackward0", "tensors": ["q"], "next": []}],
               "w": [{"id": "n0", "name": "AccumulateGrad", "tensors": ["w"], "next": []}]},
    "records": [{"label": "secret", "kind": "values"}],
    "probes": {"again": {"ok": false, "error": "Trying to backward through the graph a second time"}},
    "warnings": [], "stdout": "printed"})");
}

}  // namespace

TEST_CASE("visible facts keep what the visible checks read, and nothing of the hidden ones", "[facts]") {
  const grader::Rubric r = grader::parse_rubric(kRubric, "test");
  const json v = grader::visible_facts(r, snapshot());
  CHECK(v["tensors"].contains("f"));
  CHECK(v["tensors"].contains("q"));  // named in f's graph, which a visible check compares
  CHECK(!v["tensors"].contains("w"));  // only the hidden check reads it
  CHECK(!v["tensors"].contains("other"));
  CHECK(v["graphs"].contains("f"));
  CHECK(!v["graphs"].contains("w"));
  CHECK(v["probes"].contains("again"));
  CHECK(v["records"].empty());
  CHECK(!v.contains("stdout"));  // no check compares the output
  const json doc = grader::facts_document(r, snapshot(), "", true, std::nullopt);
  CHECK(!doc["snapshot"].contains("nonce"));
  CHECK(!doc["snapshot"].contains("usage"));
  CHECK(!doc.contains("solution_sha256"));
}

TEST_CASE("recorded facts hold only for the rubric's probes and the solution they came from", "[facts]") {
  const grader::Rubric r = grader::parse_rubric(kRubric, "test");
  const fs::path dir = fs::temp_directory_path() / ("gradlab-facts-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "ex.facts.json").string();
  const std::string starter = "void f() {\n  // START CODE HERE\n  // Do it.\n  // END CODE HERE\n}\n";
  REQUIRE(grader::write_file_atomic(path, grader::facts_document(r, snapshot(), "sha-1", false, starter).dump()).empty());
  std::string why;
  // The starter's blanks are recorded with them, and held to the starter.
  REQUIRE(grader::recorded_starter(path));
  CHECK(grader::recorded_starter(path)->blanks.size() == 1);
  CHECK(grader::starter_difference(path, starter).empty());
  CHECK_THAT(grader::starter_difference(path, starter + "// edited\n"), Catch::Contains("another version of the starter"));
  CHECK(grader::read_facts(path, r, "sha-1", why).has_value());
  CHECK(grader::read_facts(path, r, "", why).has_value());  // a release: no solution to compare with
  CHECK(!grader::read_facts(path, r, "sha-2", why));
  CHECK_THAT(why, Catch::Contains("another version of the solution"));
  json changed = kRubric;
  changed["probes"][0]["retain_graph"] = true;
  CHECK(!grader::read_facts(path, grader::parse_rubric(changed, "test"), "sha-1", why));
  CHECK_THAT(why, Catch::Contains("other probes"));
  changed = kRubric;
  changed["exercise"] = "ex2";
  CHECK(!grader::read_facts(path, grader::parse_rubric(changed, "test"), "sha-1", why));
  CHECK_THAT(why, Catch::Contains("not ex2"));
  REQUIRE(grader::write_file_atomic(path, "{\"facts\": 1, \"exer").empty());
  CHECK(!grader::read_facts(path, r, "sha-1", why));
  CHECK_THAT(why, Catch::Contains("not JSON"));
  CHECK(!grader::read_facts((dir / "missing.json").string(), r, "", why));
  fs::remove_all(dir);
}

TEST_CASE("facts differ where a value, a key or a length does, beyond the default tolerance", "[facts]") {
  const json a = snapshot();
  json b = a;
  CHECK(grader::facts_difference(a, b).empty());
  b["tensors"]["f"]["values"][0] = 18.0 * (1 + 5e-6);
  CHECK(grader::facts_difference(a, b).empty());
  b["tensors"]["f"]["values"][0] = 18.5;
  CHECK(grader::facts_difference(a, b) == "/tensors/f/values/0: 18.0 recorded, 18.5 now");
  b = a;
  b["tensors"].erase("q");
  CHECK_THAT(grader::facts_difference(a, b), Catch::StartsWith("/tensors: \"q\" recorded, gone now"));
  b = a;
  b["graphs"]["f"].erase(1);
  CHECK_THAT(grader::facts_difference(a, b), Catch::StartsWith("/graphs/f: 2 entries recorded, 1 now"));
  b = a;
  b["stdout"] = "other";
  CHECK_THAT(grader::facts_difference(a, b), Catch::StartsWith("/stdout:"));
}

TEST_CASE("a public rubric leaves out the hidden checks and the diagnoses that name them", "[release]") {
  const json p = grader::public_rubric(kRubric);
  REQUIRE(p["checks"].size() == 3);
  for (const auto& c : p["checks"]) CHECK(c["id"] != "w-leaf");
  REQUIRE(p["diagnoses"].size() == 1);
  CHECK(p["diagnoses"][0]["hint"] == "kept");
  CHECK(p["hidden_checks"]["count"] == 1);
  CHECK(p["hidden_checks"]["points"] == 3.0);
  CHECK(p["probes"] == kRubric["probes"]);  // probes run in order: all stay, or the visible ones' facts would change
  const grader::Rubric r = grader::parse_rubric(p, "public");
  CHECK(r.hidden_count == 1);
  CHECK(r.hidden_points == 3.0);
  CHECK(r.max_points() == 4.0);
}

TEST_CASE("answer lines: a solution's lines that carry content and are not the starter's", "[release]") {
  const fs::path root = fs::temp_directory_path() / ("gradlab-course-" + std::to_string(::getpid()));
  fs::create_directories(root / "solutions");
  fs::create_directories(root / "exercises");
  fs::create_directories(root / "tree" / "src");
  std::ofstream(root / "solutions" / "ex.rubric.json") << kRubric.dump();
  std::ofstream(root / "exercises" / "ex.cpp") << "#include <gradlab/lab.h>\nvoid ex(lab::Lab& lab) {\n  // blank\n}\n";
  std::ofstream(root / "solutions" / "ex.cpp")
      << "#include <gradlab/lab.h>\nvoid ex(lab::Lab& lab) {\n  auto f = torch::ones({2});\n  // a comment\n  });\n}\n";
  std::ofstream(root / "tree" / "src" / "a.cpp") << "int x;\n    auto   f = torch::ones({2});  \n});\n";
  const grader::Course course{root.string()};
  const auto answers = grader::answer_lines(course);
  REQUIRE(answers == std::vector<std::string>{"auto f = torch::ones({2});"});
  const auto found = grader::find_answers((root / "tree").string(), answers);
  REQUIRE(found.size() == 1);
  CHECK(found[0] == "src/a.cpp:2: auto f = torch::ones({2});");
  fs::remove_all(root);
}
