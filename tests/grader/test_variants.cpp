// Variants (variants.h): each student's numbers are fixed by their login,
// every variant differs from every other, templates fill from the numbers
// and the reference's facts, and a starter is rewritten on exactly the lines
// its rubric names, however often it is personalised.
#include "catch_compat.h"

#include <set>

#include "judge/rubric.h"
#include "judge/variants.h"

using grader::json;

namespace {

grader::Rubric rubric() {
  return grader::parse_rubric(json::parse(R"({
    "rubric": 1, "exercise": "exercise3", "title": "f = (x² + y)·z", "function": "exercise3",
    "variants": {
      "given": {"x": [-2, -3, 1], "y": [2, 5], "z": [3, 4, 0.5]},
      "starter": ["// at x = ${x}, y = ${y}, z = ${z}:", "//   df/dx = ${grad:x}, f = ${value:f}"]
    },
    "checks": [{"id": "x-grad", "kind": "grad", "tensor": "x", "name": "df/dx = ${grad:x}",
                "hint": "2x·z at x = ${x}, z = ${z}"}]
  })"), "exercise3.rubric.json");
}

json facts(double f, double dx) {
  return {{"tensors", {{"f", {{"values", {f}}}}, {"x", {{"values", {-2.0}}, {"grad", {{"values", {dx}}}}}}}}};
}

const char* kStarter =
    "// Exercise 3\n"
    "// at x = -2, y = 2, z = 3:\n"
    "//   df/dx = -12, f = 18\n"
    "void exercise3(lab::Lab& lab) {\n"
    "  // START CODE HERE\n"
    "  x = torch::tensor(-2.0);\n"
    "  // END CODE HERE\n"
    "}\n";

}  // namespace

TEST_CASE("variant 0 is the lesson's numbers, and every variant differs from every other") {
  const auto r = rubric();
  CHECK(grader::variant_capacity(r) == 3 * 2 * 3 - 1);
  CHECK(grader::given_at(r, 0) == json::parse(R"({"x": -2.0, "y": 2.0, "z": 3.0})"));
  std::set<std::string> seen = {grader::given_at(r, 0).dump()};
  for (int v = 1; v <= grader::variant_capacity(r); ++v) CHECK(seen.insert(grader::given_at(r, v).dump()).second);
  CHECK_THROWS_AS(grader::given_at(r, 18), grader::VariantError);
  CHECK_THROWS_AS(grader::given_at(r, -1), grader::VariantError);
}

TEST_CASE("a student's variant depends on their login only, and spreads over the class") {
  CHECK(grader::variant_for("ada@example.edu", 20) == grader::variant_for("ada@example.edu", 20));
  std::set<int> used;
  for (int i = 0; i < 200; ++i) {
    const int v = grader::variant_for("student" + std::to_string(i) + "@example.edu", 20);
    CHECK(v >= 1);
    CHECK(v <= 20);
    used.insert(v);
  }
  CHECK(used.size() == 20);
  CHECK(grader::variant_for("ada@example.edu", 0) == 0);
}

TEST_CASE("numbers are written as a statement writes them") {
  CHECK(grader::number_text(-12.0) == "-12");
  CHECK(grader::number_text(-0.0) == "0");
  CHECK(grader::number_text(0.5) == "0.5");
  CHECK(grader::number_text(2.302585) == "2.303");
  CHECK(grader::number_text(0.1f) == "0.1");  // a float32 fact reads as the number it stands for
}

TEST_CASE("templates fill from the variant's numbers and the reference's facts") {
  const auto r = rubric();
  const json given = grader::given_at(r, 0);
  CHECK(grader::fill("x = ${x}, z = ${z}: df/dx = ${grad:x}, f = ${value:f}", given, facts(18, -12)) ==
        "x = -2, z = 3: df/dx = -12, f = 18");
  CHECK_THROWS_AS(grader::fill("${grad:q}", given, facts(18, -12)), grader::VariantError);
  CHECK_THROWS_AS(grader::fill("${w}", given, facts(18, -12)), grader::VariantError);
  const auto f = grader::filled(r, given, facts(18, -12));
  CHECK(f.checks[0].name == "df/dx = -12");
  CHECK(f.checks[0].hint == "2x·z at x = -2, z = 3");
}

TEST_CASE("a rubric's placeholders must name a number it gives or a fact") {
  json j = json::parse(R"({
    "rubric": 1, "exercise": "e", "title": "t", "function": "e",
    "variants": {"given": {"x": [1, 2]}},
    "checks": [{"id": "a", "kind": "grad", "tensor": "x", "name": "at ${w}"}]
  })");
  CHECK_THROWS_WITH(grader::parse_rubric(j, "e.rubric.json"), Catch::Contains("checks[0].name") && Catch::Contains("${w}"));
  j["checks"][0]["name"] = "at ${x}";
  j["variants"]["given"]["x"] = json::array({1, 1});
  CHECK_THROWS_WITH(grader::parse_rubric(j, "e.rubric.json"), Catch::Contains("listed twice"));
  j["variants"]["given"]["x"] = json::array({1, 2});
  j["variants"]["starter"] = json::array({"// no number here"});
  CHECK_THROWS_WITH(grader::parse_rubric(j, "e.rubric.json"), Catch::Contains("variants.starter[0]"));
}

TEST_CASE("a starter is rewritten on its template lines only, again and again") {
  const auto r = rubric();
  const json g7 = grader::given_at(r, 7), g3 = grader::given_at(r, 3);
  const std::string v7 = grader::starter_at(kStarter, r, 7, g7, facts(99, 7.5));
  CHECK(grader::variant_in(v7) == 7);
  CHECK(v7.find("// at x = " + grader::number_text(g7["x"].get<double>()) + ", y = ") != std::string::npos);
  CHECK(v7.find("//   df/dx = 7.5, f = 99\n") != std::string::npos);
  CHECK(v7.find("  x = torch::tensor(-2.0);\n") != std::string::npos);  // the student's code stays
  // Personalised again for another variant, and back to the lesson's.
  const std::string v3 = grader::starter_at(v7, r, 3, g3, facts(1, 2));
  CHECK(grader::variant_in(v3) == 3);
  CHECK(grader::starter_at(v3, r, 0, grader::given_at(r, 0), facts(18, -12)) == kStarter);
  CHECK(grader::variant_in(kStarter) == 0);
  // A starter the template does not describe is an error, not a silent miss.
  CHECK_THROWS_AS(grader::starter_at("// nothing\n", r, 1, grader::given_at(r, 1), facts(1, 2)), grader::VariantError);
}
