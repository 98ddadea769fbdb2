// Scoring is a pure function of (rubric, student snapshot, reference
// snapshot): these tests feed it snapshots in the harness's format.
#include "catch_compat.h"

#include "judge/checks.h"
#include "common/sha256.h"

using grader::json;

namespace {

json scalar(double v, bool leaf, const char* grad_fn, json grad) {
  json t = {{"defined", true},     {"shape", json::array()}, {"dtype", "Float"},  {"device", "cpu"},
            {"requires_grad", true}, {"is_leaf", leaf},        {"retains_grad", false}, {"grad_fn", grad_fn ? json(grad_fn) : json()},
            {"version", 0},        {"values", {v}}};
  t["grad"] = grad.is_null() ? json() : json{{"shape", json::array()}, {"values", {grad}}};
  return t;
}

// x -> p = x² (PowBackward0 or MulBackward0 with two edges to x) -> f = p * z
json lab_graph(bool product) {
  json next_p = product ? json::parse(R"([["n3", 0], ["n3", 0]])") : json::parse(R"([["n3", 0]])");
  return json::array({
      {{"id", "n0"}, {"name", "MulBackward0"}, {"tensors", {"f"}}, {"next", json::parse(R"([["n1", 0], ["n2", 0]])")}},
      {{"id", "n1"}, {"name", product ? "MulBackward0" : "PowBackward0"}, {"tensors", {"p"}}, {"next", next_p}},
      {{"id", "n2"}, {"name", "torch::autograd::AccumulateGrad"}, {"tensors", {"z"}}, {"next", json::array()}},
      {{"id", "n3"}, {"name", "torch::autograd::AccumulateGrad"}, {"tensors", {"x"}}, {"next", json::array()}},
  });
}

json snapshot(double xgrad, bool product = false) {
  json s;
  s["status"] = "ok";
  s["tensors"]["x"] = scalar(-2, true, nullptr, xgrad);
  s["tensors"]["f"] = scalar(12, false, "MulBackward0", json());
  s["graphs"]["f"] = lab_graph(product);
  s["records"] = json::array();
  return s;
}

grader::Rubric rubric(const char* checks) {
  json j = {{"rubric", 1}, {"exercise", "e"}, {"title", "t"}, {"function", "e"}, {"checks", json::parse(checks)}};
  j["alternatives"] = json::parse(R"([["PowBackward0", "MulBackward0"]])");
  return grader::parse_rubric(j, "r.json");
}

}  // namespace

TEST_CASE("a grad check passes within tolerance and fails beyond it", "[checks]") {
  auto r = rubric(R"([{"id": "g", "kind": "grad", "tensor": "x", "name": "n", "points": 2,
                       "tolerance": {"rtol": 0, "atol": 0.01}}])");
  auto ok = grader::evaluate(r, snapshot(-12.005), snapshot(-12));
  CHECK(ok[0].status == grader::CheckStatus::Passed);
  CHECK(ok[0].points == 2);
  auto bad = grader::evaluate(r, snapshot(-12.02), snapshot(-12));
  CHECK(bad[0].status == grader::CheckStatus::Failed);
  CHECK(bad[0].points == 0);
  CHECK(bad[0].expected == "-12");
  CHECK(bad[0].found == "-12.02");
}

TEST_CASE("a grad check explains an undefined gradient", "[checks]") {
  auto r = rubric(R"([{"id": "g", "kind": "grad", "tensor": "f", "name": "n", "expected": 1}])");
  auto res = grader::evaluate(r, snapshot(-12), snapshot(-12));
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK(res[0].found == "undefined");
  CHECK_THAT(res[0].message, Catch::Contains("not a leaf and does not retain its gradient"));
  // "expected": null means the gradient must be undefined.
  auto u = rubric(R"([{"id": "g", "kind": "grad", "tensor": "f", "name": "n", "expected": null}])");
  CHECK(grader::evaluate(u, snapshot(-12), snapshot(-12))[0].status == grader::CheckStatus::Passed);
}

TEST_CASE("a missing or undefined tensor fails with the cause", "[checks]") {
  auto r = rubric(R"([{"id": "g", "kind": "is_leaf", "tensor": "q", "name": "n", "expected": false}])");
  auto res = grader::evaluate(r, snapshot(-12), snapshot(-12));
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK_THAT(res[0].message, Catch::Contains("did not name a tensor \"q\""));
  json s = snapshot(-12);
  s["tensors"]["q"] = {{"defined", false}};
  res = grader::evaluate(r, s, snapshot(-12));
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK_THAT(res[0].message, Catch::Contains("never given a value"));
}

TEST_CASE("graphs match modulo accepted alternatives, and name their differences", "[checks][graph]") {
  auto r = rubric(R"([{"id": "g", "kind": "graph", "tensor": "f", "name": "n"}])");
  // x * x reaches x twice where x.pow(2) reaches it once: accepted.
  CHECK(grader::evaluate(r, snapshot(-12, true), snapshot(-12))[0].status == grader::CheckStatus::Passed);
  CHECK(grader::graph_expression(lab_graph(false)) == "f=MulBackward0(p=PowBackward0(x), z)");

  json wrong = snapshot(-12);
  wrong["graphs"]["f"][1]["name"] = "AddBackward0";
  auto res = grader::evaluate(r, wrong, snapshot(-12));
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK_THAT(res[0].message, Catch::Contains("expected PowBackward0, found AddBackward0"));

  json no_z = snapshot(-12);
  no_z["graphs"]["f"][0]["next"][1] = {nullptr, 0};
  auto d = grader::compare_graphs(no_z["graphs"]["f"], lab_graph(false), r);
  REQUIRE(d.differences.size() == 1);
  CHECK_THAT(d.differences[0], Catch::Contains("found None"));
  CHECK(d.reference_nodes == std::vector<std::string>{"n2"});
}

TEST_CASE("the operands of a product or a sum may come in either order", "[checks][graph]") {
  auto r = rubric(R"([{"id": "g", "kind": "graph", "tensor": "f", "name": "n"}])");
  json swapped = snapshot(-12);
  swapped["graphs"]["f"][0]["next"] = json::parse(R"([["n2", 0], ["n1", 0]])");  // z * p instead of p * z
  CHECK(grader::evaluate(r, swapped, snapshot(-12))[0].status == grader::CheckStatus::Passed);
  // Order is free only where the operation commutes: p - z is not z - p.
  json sub = snapshot(-12), sub_swapped = swapped;
  sub["graphs"]["f"][0]["name"] = sub_swapped["graphs"]["f"][0]["name"] = "SubBackward0";
  auto res = grader::evaluate(r, sub_swapped, sub);
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK_THAT(res[0].message, Catch::Contains("expected PowBackward0, found z"));
  // A swap does not hide a real difference below it.
  json wrong = swapped;
  wrong["graphs"]["f"][1]["name"] = "ExpBackward0";
  res = grader::evaluate(r, wrong, snapshot(-12));
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK_THAT(res[0].message, Catch::Contains("expected PowBackward0, found ExpBackward0"));
}

TEST_CASE("a snapshot check may compare flags instead of values", "[checks]") {
  auto r = rubric(R"([{"id": "s", "kind": "snapshots", "labels": ["before"], "name": "n", "fields": ["is_leaf", "grad_fn"]}])");
  auto with = [](bool leaf, const char* fn, double v) {
    json s = snapshot(0);
    s["records"].push_back({{"kind", "snapshot"}, {"label", "before"}, {"tensor", scalar(v, leaf, fn, json())}});
    return s;
  };
  // Values are not compared when the fields leave them out.
  CHECK(grader::evaluate(r, with(false, "MulBackward0", 1), with(false, "MulBackward0", 2))[0].status == grader::CheckStatus::Passed);
  auto res = grader::evaluate(r, with(true, nullptr, 1), with(false, "MulBackward0", 1));
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK(res[0].message == "\"before\" has is_leaf=true, expected is_leaf=false");
  CHECK(res[0].found == json::array({"before: is_leaf=true, grad_fn=None"}));
  CHECK_THROWS_WITH(rubric(R"([{"id": "s", "kind": "snapshots", "labels": ["b"], "name": "n", "fields": ["leaf"]}])"),
                    Catch::Contains("checks[0] (\"s\").fields: unknown field \"leaf\""));
}

TEST_CASE("a stdout check names the first line that differs", "[checks]") {
  auto r = rubric(R"([{"id": "o", "kind": "stdout", "name": "n"}])");
  auto out = [](const char* text) {
    json s = snapshot(0);
    s["stdout"] = text;
    return s;
  };
  CHECK(grader::evaluate(r, out("0  A\n1   B  \n"), out("0  A\n1   B\n"))[0].status == grader::CheckStatus::Passed);  // trailing spaces
  CHECK(grader::evaluate(r, out("0  A\n1  B\n"), out("0  A\n1   B\n"))[0].message == "line 2 is \"1  B\", expected \"1   B\"");
  CHECK(grader::evaluate(r, out("0  A\n"), out("0  A\n1   B\n"))[0].message == "line 2 is missing; expected \"1   B\"");
  CHECK(grader::evaluate(r, out("0  A\nextra\n"), out("0  A\n"))[0].message ==
        "line 2 is \"extra\", but the reference's output ends before it");
}

TEST_CASE("a snapshot sequence must match in count, order and values", "[checks]") {
  auto r = rubric(R"([{"id": "s", "kind": "snapshots", "labels": ["it1", "it2"], "name": "n"}])");
  auto with = [](std::vector<double> vals) {
    json s = snapshot(0);
    int i = 1;
    for (double v : vals) s["records"].push_back({{"kind", "value"}, {"label", "it" + std::to_string(i++)}, {"value", v}});
    return s;
  };
  CHECK(grader::evaluate(r, with({1, 2}), with({1, 2}))[0].status == grader::CheckStatus::Passed);
  auto res = grader::evaluate(r, with({1, 1}), with({1, 2}));
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK(res[0].message == "\"it2\" is 1, expected 2");
  res = grader::evaluate(r, with({1}), with({1, 2}));
  CHECK_THAT(res[0].message, Catch::Contains("1 of these snapshots was recorded, expected 2"));
  // After an exception, the missing snapshot was not reached: said so, without a mistake's hint.
  auto hinted = rubric(R"([{"id": "s", "kind": "snapshots", "labels": ["it1", "it2"], "name": "n", "hint": "step twice"}])");
  res = grader::evaluate(hinted, with({1}), with({1, 2}), "ex.cpp:7");
  CHECK(res[0].status == grader::CheckStatus::Failed);
  CHECK(res[0].message == "not reached: the program stopped at ex.cpp:7 before this");
  CHECK(res[0].hint.empty());
  CHECK(res[0].found.is_null());
  // A wrong value that was reached keeps its feedback, exception or not.
  res = grader::evaluate(hinted, with({1, 1}), with({1, 2}), "ex.cpp:7");
  CHECK(res[0].message == "\"it2\" is 1, expected 2");
  CHECK(res[0].hint == "step twice");
}

TEST_CASE("values print with PyTorch's nesting", "[checks]") {
  CHECK(grader::format_values(json::parse("[1.5, 2, 3, 4]"), json::parse("[2, 2]")) == "[[1.5, 2], [3, 4]]");
  CHECK(grader::format_values(json::parse("[-12]"), json::array()) == "-12");
  CHECK(grader::format_values(json::parse("[\"nan\", 0.000123]"), json::parse("[2]")) == "[nan, 0.000123]");
}

TEST_CASE("close() treats NaN as equal to NaN and infinities exactly", "[checks]") {
  grader::Tolerance t;
  CHECK(grader::close(json::parse("[\"nan\"]"), json::parse("[\"nan\"]"), t));
  CHECK_FALSE(grader::close(json::parse("[\"nan\"]"), json::parse("[1]"), t));
  CHECK(grader::close(json::parse("[\"inf\"]"), json::parse("[\"inf\"]"), t));
  CHECK_FALSE(grader::close(json::parse("[\"inf\"]"), json::parse("[\"-inf\"]"), t));
}

TEST_CASE("sha256 matches the FIPS 180-4 examples", "[sha256]") {
  CHECK(grader::sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(grader::sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(grader::sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST_CASE("a report draws the checked graphs first, the reference beside a failed one, then each outermost graph",
          "[checks][graph]") {
  auto r = rubric(R"([{"id": "g", "kind": "graph", "tensor": "f", "name": "n"}])");
  json wrong = snapshot(-12);
  wrong["graphs"]["f"][1]["name"] = "AddBackward0";
  // p's own graph lies inside f's (p names a node of f's graph): not drawn twice.
  wrong["graphs"]["p"] = json::array({wrong["graphs"]["f"][1], wrong["graphs"]["f"][3]});
  wrong["graphs"]["p"][0]["id"] = "n0";
  wrong["graphs"]["p"][0]["next"] = json::parse(R"([["n1", 0]])");
  wrong["graphs"]["p"][1]["id"] = "n1";
  // q was computed apart from f: drawn on its own.
  wrong["graphs"]["q"] = json::array({{{"id", "n0"}, {"name", "ExpBackward0"}, {"tensors", {"q"}}, {"next", json::array()}}});
  auto results = grader::evaluate(r, wrong, snapshot(-12));
  auto views = grader::graph_views(r, results, wrong, snapshot(-12));
  REQUIRE(views.size() == 2);
  CHECK(views[0].tensor == "f");
  CHECK(views[0].check_id == "g");
  CHECK(views[0].reference == lab_graph(false));
  CHECK(views[0].student_marked == std::vector<std::string>{"n1"});
  CHECK(views[0].reference_marked == std::vector<std::string>{"n1"});
  CHECK(views[0].student_tensors.contains("x"));
  CHECK(views[0].student_tensors["x"]["is_leaf"] == true);
  CHECK(views[1].tensor == "q");
  CHECK(views[1].reference.is_null());

  // A hidden check's reference would give the answer away: not shown.
  auto hidden = rubric(R"([{"id": "g", "kind": "graph", "tensor": "f", "name": "n", "visibility": "hidden"}])");
  views = grader::graph_views(hidden, grader::evaluate(hidden, wrong, snapshot(-12)), wrong, snapshot(-12));
  REQUIRE_FALSE(views.empty());
  CHECK(views[0].reference.is_null());
  CHECK(views[0].differences.empty());
  // A passed check: the student's graph alone.
  views = grader::graph_views(r, grader::evaluate(r, snapshot(-12), snapshot(-12)), snapshot(-12), snapshot(-12));
  REQUIRE(views.size() == 1);
  CHECK(views[0].reference.is_null());
}

TEST_CASE("a rubric may take a one-element tensor for a scalar, and only that", "[checks]") {
  auto make = [](bool loose) {
    json j = {{"rubric", 1}, {"exercise", "e"}, {"title", "t"}, {"function", "e"}};
    j["checks"] = json::parse(R"([{"id": "v", "kind": "value", "tensor": "x", "name": "n"},
                                  {"id": "g", "kind": "grad", "tensor": "x", "name": "n"}])");
    if (loose) j["one_element_is_scalar"] = true;
    return grader::parse_rubric(j, "r.json");
  };
  auto shaped = [](json shape, json values, json grad_values) {
    json s = snapshot(-12);
    s["tensors"]["x"]["shape"] = shape;
    s["tensors"]["x"]["values"] = values;
    s["tensors"]["x"]["grad"] = {{"shape", shape}, {"values", grad_values}};
    return s;
  };
  const json vec = shaped({1}, {-2.0}, {-12.0}), mat = shaped({1, 1}, {-2.0}, {-12.0}), two = shaped({2}, {-2.0, -2.0}, {-12.0, -12.0});
  for (const auto& r : grader::evaluate(make(true), vec, snapshot(-12))) CHECK(r.status == grader::CheckStatus::Passed);
  for (const auto& r : grader::evaluate(make(true), mat, snapshot(-12))) CHECK(r.status == grader::CheckStatus::Passed);
  for (const auto& r : grader::evaluate(make(true), two, snapshot(-12))) CHECK(r.status == grader::CheckStatus::Failed);
  for (const auto& r : grader::evaluate(make(false), vec, snapshot(-12))) {
    CHECK(r.status == grader::CheckStatus::Failed);
    CHECK_THAT(r.message, Catch::Contains("the shape is [1], expected []"));
  }
  // The value still has to be right.
  for (const auto& r : grader::evaluate(make(true), shaped({1}, {2.0}, {12.0}), snapshot(-12))) CHECK(r.status == grader::CheckStatus::Failed);
}

TEST_CASE("a diagnosis names the mistake the facts show, and only when they show it", "[checks]") {
  json j = {{"rubric", 1}, {"exercise", "e"}, {"title", "t"}, {"function", "e"}};
  j["probes"] = json::parse(R"([{"id": "again", "kind": "backward", "tensor": "f"}])");
  j["checks"] = json::parse(R"([{"id": "g", "kind": "grad", "tensor": "x", "name": "n", "hint": "general"}])");
  j["diagnoses"] = json::parse(R"([
    {"check": "g", "when": [{"probe": "again", "ok": true}, {"tensor": "x", "field": "grad_defined", "equals": true}],
     "hint": "the probe ran"},
    {"check": "g", "when": [{"check": "g", "status": "failed"}], "hint": "second"}])");
  const auto r = grader::parse_rubric(j, "r.json");
  json wrong = snapshot(12);
  wrong["probes"]["again"] = {{"ok", true}};
  auto res = grader::evaluate(r, wrong, snapshot(-12));
  CHECK(res[0].hint == "the probe ran");
  wrong["probes"]["again"] = {{"ok", false}, {"error", "e"}};
  CHECK(grader::evaluate(r, wrong, snapshot(-12))[0].hint == "second");
  // A passed check keeps its hint: nothing to diagnose.
  CHECK(grader::evaluate(r, snapshot(-12), snapshot(-12))[0].hint == "general");

  json bad = j;
  bad["diagnoses"] = json::parse(R"([{"check": "nope", "when": [{"probe": "again", "ok": true}], "hint": "h"}])");
  CHECK_THROWS_WITH(grader::parse_rubric(bad, "r.json"), Catch::Contains("diagnoses[0].check: no check has the id \"nope\""));
  bad["diagnoses"] = json::parse(R"([{"check": "g", "when": [{"tensor": "x", "field": "colour", "equals": 1}], "hint": "h"}])");
  CHECK_THROWS_WITH(grader::parse_rubric(bad, "r.json"), Catch::Contains("unknown field \"colour\""));
  bad["diagnoses"] = json::parse(R"([{"check": "g", "when": [], "hint": "h"}])");
  CHECK_THROWS_WITH(grader::parse_rubric(bad, "r.json"), Catch::Contains("at least one condition"));
}
