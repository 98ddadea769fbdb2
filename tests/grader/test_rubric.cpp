// Rubric parsing: a good rubric reads back as written; a malformed one is an
// error that names the file and the field.
#include "catch_compat.h"

#include "judge/rubric.h"

using grader::json;
using grader::parse_rubric;
using grader::RubricError;

namespace {

json minimal() {
  return json::parse(R"({
    "rubric": 1, "exercise": "exercise9", "title": "t", "function": "exercise9",
    "checks": [{"id": "a", "kind": "grad", "tensor": "x", "name": "x's gradient"}]
  })");
}

// The error text of parsing j, or "" when it parses.
std::string error_of(const json& j) {
  try {
    parse_rubric(j, "solutions/exercise9.rubric.json");
  } catch (const RubricError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a minimal rubric parses with the documented defaults", "[rubric]") {
  auto r = parse_rubric(minimal(), "r.json");
  CHECK(r.exercise == "exercise9");
  CHECK(r.function == "exercise9");
  REQUIRE(r.checks.size() == 1);
  CHECK(r.checks[0].points == 1);
  CHECK_FALSE(r.checks[0].hidden);
  CHECK(r.checks[0].tol.rtol == 1e-5);
  CHECK(r.checks[0].tol.atol == 1e-6);
  CHECK(r.limits.cpu_seconds == 2);
  CHECK(r.limits.wall_seconds == 5);
  CHECK(r.max_points() == 1);
}

TEST_CASE("alternatives make grad_fn names equivalent in both directions", "[rubric]") {
  json j = minimal();
  j["alternatives"] = json::parse(R"([["PowBackward0", "MulBackward0"]])");
  auto r = parse_rubric(j, "r.json");
  CHECK(r.equivalent("PowBackward0", "MulBackward0"));
  CHECK(r.equivalent("MulBackward0", "PowBackward0"));
  CHECK(r.equivalent("AddBackward0", "AddBackward0"));
  CHECK_FALSE(r.equivalent("AddBackward0", "MulBackward0"));
}

TEST_CASE("malformed rubrics name the file and the field", "[rubric]") {
  const std::string file = "solutions/exercise9.rubric.json";
  json j = minimal();
  j["checks"][0]["kind"] = "gradd";
  std::string e = error_of(j);
  CHECK_THAT(e, Catch::Contains(file));
  CHECK_THAT(e, Catch::Contains("checks[0] (\"a\").kind"));
  CHECK_THAT(e, Catch::Contains("unknown check kind \"gradd\""));

  j = minimal();
  j["checks"][0].erase("tensor");
  CHECK_THAT(error_of(j), Catch::Contains("needs the field \"tensor\""));

  j = minimal();
  j["checks"][0]["points"] = "two";
  CHECK_THAT(error_of(j), Catch::Contains("checks[0] (\"a\").points: must be a number, found string"));

  j = minimal();
  j["checks"][0]["tolerence"] = json::object();
  CHECK_THAT(error_of(j), Catch::Contains("unknown field \"tolerence\""));

  j = minimal();
  j["checks"].push_back(j["checks"][0]);
  CHECK_THAT(error_of(j), Catch::Contains("checks[1] (\"a\").id: check id is used twice"));

  j = minimal();
  j["checks"][0]["visibility"] = "secret";
  CHECK_THAT(error_of(j), Catch::Contains(".visibility: must be \"visible\" or \"hidden\""));

  j = minimal();
  j["limits"] = {{"cpu_seconds", -1}};
  CHECK_THAT(error_of(j), Catch::Contains("limits.cpu_seconds: must be greater than 0"));

  j = minimal();
  j["checks"][0] = {{"id", "p"}, {"kind", "probe"}, {"name", "n"}, {"probe", "again"}, {"expect", "error"}};
  CHECK_THAT(error_of(j), Catch::Contains("no probe has the id \"again\""));

  j = minimal();
  j["probes"] = json::array({{{"id", "w"}, {"kind", "walk"}, {"function", "walk_graph"}, {"graphs", {"leaf", "loops"}}}});
  CHECK_THAT(error_of(j), Catch::Contains("probes[0].graphs: unknown graph \"loops\""));
  j["probes"][0]["graphs"] = json::array();
  CHECK_THAT(error_of(j), Catch::Contains("probes[0].graphs: must name at least one graph"));
  j["probes"][0]["graphs"] = {"leaf", "deep-chain"};
  j["checks"][0] = {{"id", "w"}, {"kind", "probe_cases"}, {"name", "n"}, {"probe", "w"}};
  CHECK(error_of(j).empty());
  // Made-up graphs need a line that says where each node's name goes.
  j["probes"][0]["random"] = 3;
  CHECK_THAT(error_of(j), Catch::Contains("probes[0]: missing field \"line\""));
  j["probes"][0]["line"] = "${depth} ${indent}";
  CHECK_THAT(error_of(j), Catch::Contains("probes[0].line: must say where the node's name goes with ${name}"));
  j["probes"][0]["line"] = "${depth} ${indent} ${name}";
  CHECK(error_of(j).empty());
  j["probes"][0]["random"] = 9;
  CHECK_THAT(error_of(j), Catch::Contains("probes[0].random: must be 0 to 8 graphs (a whole number), found 9"));
  j["probes"][0]["random"] = "3";
  CHECK_THAT(error_of(j), Catch::Contains("probes[0].random: must be 0 to 8 graphs (a whole number), found \"3\""));
  j["probes"][0]["random"] = 3;
  j["probes"] = json::array({{{"id", "c"}, {"kind", "call"}, {"function", "f"}, {"inputs", json::array()}}});
  CHECK_THAT(error_of(j), Catch::Contains("probes[0].inputs: must hold 1 to 16 inputs"));

  j = minimal();
  j["function"] = "exercise 9";
  CHECK_THAT(error_of(j), Catch::Contains("function: must be a C++ identifier"));

  j = minimal();
  j.erase("checks");
  CHECK_THAT(error_of(j), Catch::Contains("top level: missing field \"checks\""));

  CHECK(error_of(minimal()).empty());
}

TEST_CASE("a rubric that is not JSON names the file", "[rubric]") {
  CHECK_THROWS_WITH(grader::load_rubric("/nonexistent/r.json"), Catch::Contains("/nonexistent/r.json: cannot read"));
}
