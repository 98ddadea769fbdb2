// The check of the harness's result (grader/src/judge/snapshot.h) on real results,
// written by the harness for the course's solutions (tests/grader/snapshots/),
// and on those results forged: each forgery is refused with where and what,
// and none crashes the grader.
#include "catch_compat.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "judge/checks.h"
#include "judge/snapshot.h"

using grader::json;

namespace {

const std::filesystem::path kDir = std::filesystem::path(GRADLAB_SOURCE_DIR) / "tests/grader/snapshots";

std::string text_of(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

json real(const std::string& name) { return json::parse(text_of(kDir / (name + ".json"))); }

// What the check says of a document, with the document's own nonce.
std::string refusal(const json& doc) { return grader::check_snapshot(doc, doc.value("nonce", "")); }

// A chain of `n` nodes from the root: n0 -> n1 -> ... -> a leaf x.
json chain(size_t n) {
  json g = json::array();
  for (size_t i = 0; i + 1 < n; ++i)
    g.push_back({{"id", "n" + std::to_string(i)}, {"name", "MulBackward0"}, {"tensors", json::array()},
                 {"next", json::array({json::array({"n" + std::to_string(i + 1), 0})})}});
  g.push_back({{"id", "n" + std::to_string(n - 1)}, {"name", "torch::autograd::AccumulateGrad"},
               {"shape", json::array()}, {"tensors", json::array({"x"})}, {"next", json::array()}});
  return g;
}

// A root with `n - 1` leaves x as its inputs: one level deep.
json wide(size_t n) {
  json next = json::array();
  for (size_t i = 1; i < n; ++i) next.push_back(json::array({"n" + std::to_string(i), 0}));
  json g = json::array({{{"id", "n0"}, {"name", "CatBackward0"}, {"tensors", json::array()}, {"next", next}}});
  for (size_t i = 1; i < n; ++i)
    g.push_back({{"id", "n" + std::to_string(i)}, {"name", "torch::autograd::AccumulateGrad"},
                 {"shape", json::array()}, {"tensors", json::array({"x"})}, {"next", json::array()}});
  return g;
}

// The index of the first node of `g` with this name.
size_t first_named(const json& g, const std::string& name) {
  for (size_t i = 0; i < g.size(); ++i)
    if (g[i]["name"] == name) return i;
  FAIL("no node " << name);
  return 0;
}

}  // namespace

TEST_CASE("the harness's real results pass the check", "[snapshot]") {
  size_t seen = 0;
  for (const auto& e : std::filesystem::directory_iterator(kDir)) {
    if (e.path().extension() != ".json") continue;
    ++seen;
    const std::string text = text_of(e.path());
    const json doc = json::parse(text);
    INFO(e.path().filename().string());
    grader::Snapshot s = grader::read_snapshot(text, doc["nonce"].get<std::string>());
    CHECK(s.error == "");
    CHECK(s.doc == doc);
    // With another run's token, the same document is refused.
    CHECK(grader::read_snapshot(text, "0123456789abcdef0123456789abcdef").error ==
          "the result does not carry this run's token");
  }
  CHECK(seen >= 3);
}

TEST_CASE("a forged graph is refused: depth, size, dangling edges, duplicates, cycles", "[snapshot]") {
  const json base = real("exercise3");
  REQUIRE(refusal(base) == "");
  REQUIRE(base["graphs"].contains("f"));

  SECTION("100000 nodes deep") {
    json d = base;
    d["graphs"]["f"] = chain(100000);
    CHECK(refusal(d) == "graphs[\"f\"]: 100000 nodes (at most 10000): does a loop keep adding to one graph? "
                        "(detach(), or .item() for a number)");
    // Rendering it anyway needs no stack and writes a bounded text.
    const std::string e = grader::graph_expression(d["graphs"]["f"]);
    CHECK(e.size() < 5000);
    CHECK(e.rfind("MulBackward0(MulBackward0(", 0) == 0);
  }
  SECTION("6000 nodes deep, within the node count") {
    json d = base;
    d["graphs"]["f"] = chain(6000);
    CHECK(refusal(d) == "graphs[\"f\"]: a path of more than 5000 nodes from the root (at n5001): does a loop keep "
                        "adding to one graph? (detach(), or .item() for a number)");
  }
  SECTION("a million nodes") {
    json d = base;
    d["graphs"]["f"] = json::array();
    for (int i = 0; i < 1000000; ++i) d["graphs"]["f"].push_back(json::object());
    const std::string text = d.dump();
    CHECK(grader::read_snapshot(text, base["nonce"]).error == "graphs[\"f\"]: 1000000 nodes (at most 10000): does a loop keep adding to one graph? "
                                                               "(detach(), or .item() for a number)");
  }
  SECTION("more than 100000 nodes in all") {
    json d = base;
    for (int i = 0; i < 11; ++i) {
      d["tensors"]["t" + std::to_string(i)] = base["tensors"]["f"];
      d["graphs"]["t" + std::to_string(i)] = wide(10000);
    }
    CHECK(refusal(d) == "graphs[\"t9\"]: more than 100000 graph nodes in all");
  }
  SECTION("an edge to a node that does not exist") {
    json d = base;
    d["graphs"]["f"][0]["next"][0][0] = "n9";
    CHECK(refusal(d) == "graphs[\"f\"][0].next[0]: an edge to \"n9\", but the graph has no such node (it has n0 to n" +
                            std::to_string(base["graphs"]["f"].size() - 1) + ")");
  }
  SECTION("an edge that is not [id, input]") {
    json d = base;
    d["graphs"]["f"][0]["next"][0] = json::array({"n1", -1});
    CHECK(refusal(d) == "graphs[\"f\"][0].next[0][1]: expected a non-negative integer, found -1");
    d["graphs"]["f"][0]["next"][0] = json::array({"n1"});
    CHECK(refusal(d) == "graphs[\"f\"][0].next[0]: expected [node id or null, input number], found an array of 1");
  }
  SECTION("a node listed twice") {
    json d = base;
    d["graphs"]["f"][2]["id"] = "n1";
    CHECK(refusal(d) == "graphs[\"f\"][2].id: the node \"n1\" is listed twice (first as node 1)");
  }
  SECTION("a cycle") {
    json d = base;
    d["graphs"]["f"][1]["next"].push_back(json::array({"n0", 0}));
    CHECK(refusal(d) == "graphs[\"f\"]: an edge leads back to the root n0: the graph has a cycle");
    json c = base;
    const size_t pow = first_named(c["graphs"]["f"], "PowBackward0");
    c["graphs"]["f"][pow]["next"].push_back(json::array({"n1", 0}));
    CHECK(refusal(c).rfind("graphs[\"f\"]: the graph has a cycle (through n", 0) == 0);
  }
  SECTION("a leaf with inputs, a node nobody reaches") {
    json d = base;
    const size_t leaf = first_named(d["graphs"]["f"], "torch::autograd::AccumulateGrad");
    d["graphs"]["f"][leaf]["next"] = json::array({json::array({"n0", 0})});
    CHECK(refusal(d) == "graphs[\"f\"][" + std::to_string(leaf) +
                            "].next: a leaf's node (torch::autograd::AccumulateGrad) has no inputs, found 1");
    json u = base;
    const std::string id = "n" + std::to_string(u["graphs"]["f"].size());
    u["graphs"]["f"].push_back({{"id", id}, {"name", "MulBackward0"}, {"tensors", json::array()}, {"next", json::array()}});
    CHECK(refusal(u) == "graphs[\"f\"][" + id.substr(1) + "]: the node " + id + " cannot be reached from the root n0");
  }
  SECTION("a graph of a tensor that was not named, a node naming one that was not") {
    json d = base;
    d["graphs"]["ghost"] = base["graphs"]["f"];
    CHECK(refusal(d) == "graphs[\"ghost\"]: a graph for \"ghost\", which is not a named tensor");
    json n = base;
    n["graphs"]["f"][0]["tensors"] = json::array({"ghost"});
    CHECK(refusal(n) == "graphs[\"f\"][0].tensors[0]: \"ghost\" is not a named tensor of this result");
  }
}

TEST_CASE("a forged tensor is refused: shapes, values, types, keys, strings", "[snapshot]") {
  const json base = real("exercise3");
  REQUIRE(base["tensors"]["x"]["defined"] == true);

  SECTION("a shape of 2^60 elements") {
    json d = base;
    d["tensors"]["x"]["shape"] = json::array({int64_t{1} << 30, int64_t{1} << 30});
    CHECK(refusal(d) == "tensors[\"x\"].shape: the shape [1073741824,1073741824] holds more than 4294967296 "
                        "elements, more than the program's memory could");
  }
  SECTION("a product that overflows 64 bits") {
    json d = base;
    d["tensors"]["x"]["shape"] = json::array({int64_t{1} << 62, int64_t{1} << 62, 4});
    CHECK(refusal(d).find("holds more than 4294967296 elements") != std::string::npos);
  }
  SECTION("a huge shape with no elements is legal") {
    json d = base;
    d["tensors"]["x"]["shape"] = json::array({int64_t{1} << 40, 0});
    d["tensors"]["x"]["values"] = json::array();
    d["tensors"]["x"]["grad"] = nullptr;
    CHECK(refusal(d) == "");
    const std::string v = grader::format_values(d["tensors"]["x"]["values"], d["tensors"]["x"]["shape"]);
    CHECK(v.size() < 5000);
    CHECK(v.rfind("[[], [], ", 0) == 0);
  }
  SECTION("a shape and its values disagree") {
    json d = base;
    d["tensors"]["x"]["shape"] = json::array({2, 3});
    CHECK(refusal(d) == "tensors[\"x\"].values: 1 values for a shape of 6 elements (expected 6)");
    CHECK(grader::format_values(json::array({1}), json::array({2, 3})) == "[[1, …, …], […, …, …]]");
    d["tensors"]["x"]["shape"] = json::array({-1});
    CHECK(refusal(d) == "tensors[\"x\"].shape[0]: expected a non-negative integer, found -1");
  }
  SECTION("more values than the harness sends, or truncated without saying so") {
    json d = base;
    d["tensors"]["x"]["shape"] = json::array({5000});
    d["tensors"]["x"]["values"] = json::array();
    for (int i = 0; i < 5000; ++i) d["tensors"]["x"]["values"].push_back(1.0);
    d["tensors"]["x"]["grad"] = nullptr;
    CHECK(refusal(d) == "tensors[\"x\"].values: 5000 entries (at most 4096)");
    d["tensors"]["x"]["values"] = std::vector<double>(4096, 1.0);
    CHECK(refusal(d) == "tensors[\"x\"]: 5000 elements, but \"values_truncated\" is missing");
    d["tensors"]["x"]["values_truncated"] = true;
    CHECK(refusal(d) == "");
  }
  SECTION("NaN spelled otherwise, a value that is not a number") {
    json d = base;
    d["tensors"]["x"]["values"][0] = "NaN";
    CHECK(refusal(d) == "tensors[\"x\"].values[0]: expected a number (or \"nan\", \"inf\", \"-inf\"), found the string \"NaN\"");
    d["tensors"]["x"]["values"][0] = json{{"six", 6}};
    CHECK(refusal(d) == "tensors[\"x\"].values[0]: expected a number (or \"nan\", \"inf\", \"-inf\"), found an object of 1 keys");
    d["tensors"]["x"]["values"][0] = "nan";
    CHECK(refusal(d) == "");
  }
  SECTION("wrong types") {
    json d = base;
    d["tensors"]["x"]["requires_grad"] = "yes";
    CHECK(refusal(d) == "tensors[\"x\"].requires_grad: expected true or false, found the string \"yes\"");
    json g = base;
    g["tensors"]["x"]["grad"] = {{"shape", "[]"}, {"values", -12}};
    CHECK(refusal(g) == "tensors[\"x\"].grad.shape: expected an array, found the string \"[]\"");
    json f = base;
    f["tensors"]["x"]["grad_fn"] = 7;
    CHECK(refusal(f) == "tensors[\"x\"].grad_fn: expected a string, found 7");
    json t = base;
    t["tensors"] = json::array();
    CHECK(refusal(t) == "tensors: expected an object, found an array of 0");
    json s = base;
    s["status"] = true;
    CHECK(refusal(s) == "status: expected a string, found true");
    json r = base;
    r["records"] = json::array({{{"kind", "value"}, {"label", "loss"}, {"value", json::array()}}});
    CHECK(refusal(r) == "records[0].value: expected a number (or \"nan\", \"inf\", \"-inf\"), found an array of 0");
  }
  SECTION("missing and unknown keys") {
    json d = base;
    d["tensors"]["x"]["evil"] = 1;
    CHECK(refusal(d).rfind("tensors[\"x\"]: unknown key \"evil\" (the harness writes defined, shape, ", 0) == 0);
    json m = base;
    m["tensors"]["x"].erase("values");
    CHECK(refusal(m) == "tensors[\"x\"]: the key \"values\" is missing");
    json top = base;
    top["score"] = 100;
    CHECK(refusal(top).rfind("the top level: unknown key \"score\" (the harness writes nonce, status, ", 0) == 0);
    json u = base;
    u["tensors"]["x"] = {{"defined", false}, {"shape", json::array()}};
    CHECK(refusal(u) == "tensors[\"x\"]: unknown key \"shape\" (the harness writes defined)");
  }
  SECTION("huge strings") {
    json d = base;
    d["warnings"] = json::array({{{"message", std::string(1 << 20, 'a')}, {"during", "exercise"}}});
    CHECK(refusal(d) == "warnings[0].message: a string of 1048576 bytes (at most 65536)");
    json n = base;
    n["tensors"][std::string(5000, 'x')] = base["tensors"]["x"];
    CHECK(refusal(n) == "tensors: the name \"" + std::string(60, 'x') + "\"… (5000 bytes) is longer than 1024 bytes");
  }
}

TEST_CASE("the text is bounded before the parser sees it", "[snapshot]") {
  const std::string nonce = "0123456789abcdef0123456789abcdef";
  // nlohmann's parser recurses once per bracket: 100000 of them would
  // overflow the grader's stack.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  CHECK(grader::json_nesting(deep) == 100000);
  CHECK(grader::read_snapshot(deep, nonce).error == "the result nests brackets 100000 deep (at most 16)");
  // Brackets inside strings do not count.
  CHECK(grader::json_nesting(R"({"a": "[[[[\"[[[", "b": [[1]]})") == 3);
  CHECK(grader::read_snapshot(std::string(grader::kMaxSnapshotBytes + 1, ' '), nonce).error ==
        "the result is 16777217 bytes long (at most 16777216)");
  CHECK(grader::read_snapshot("{\"nonce\": 1} {}", nonce).error.rfind("the result is not valid JSON (", 0) == 0);
  CHECK(grader::read_snapshot("[]", nonce).error == "the result is not a JSON object but an array of 0");
  // Two documents on the channel are not one.
  const std::string one = text_of(kDir / "exercise3.json");
  const std::string token = json::parse(one)["nonce"];
  CHECK(grader::read_snapshot(one, token).ok());
  CHECK(grader::read_snapshot(one + "\n" + one, token).error.rfind("the result is not valid JSON (", 0) == 0);
}
