// Graph checks judge the concept, not one spelling: these tests build
// backward graphs in the harness's format (breadth-first node lists) the way
// different spellings of one computation record them in PyTorch, and graphs
// that really differ.
#include "catch_compat.h"

#include <map>

#include "judge/checks.h"
#include "judge/normal_form.h"

using grader::json;

namespace {

// Builds a node list. leaf("x") is x's AccumulateGrad; op(name, inputs,
// tensors) a grad_fn with edges to the inputs (-1: None). The root is the
// last node made; nodes are renumbered from it, as the harness numbers them.
struct Graph {
  struct N {
    std::string name;
    std::vector<int> next;
    std::vector<std::string> tensors;
  };
  std::vector<N> nodes;
  std::map<std::string, int> leaves;

  int leaf(const std::string& name) {
    if (leaves.count(name)) return leaves[name];
    nodes.push_back({"torch::autograd::AccumulateGrad", {}, {name}});
    return leaves[name] = static_cast<int>(nodes.size()) - 1;
  }
  int op(const std::string& name, std::vector<int> next, std::vector<std::string> tensors = {}) {
    nodes.push_back({name, std::move(next), std::move(tensors)});
    return static_cast<int>(nodes.size()) - 1;
  }
  json done() const {
    std::map<int, int> id;
    std::vector<int> order = {static_cast<int>(nodes.size()) - 1};
    id[order[0]] = 0;
    for (size_t i = 0; i < order.size(); ++i)
      for (int k : nodes[static_cast<size_t>(order[i])].next)
        if (k >= 0 && !id.count(k)) id[k] = static_cast<int>(order.size()), order.push_back(k);
    json out = json::array();
    for (int n : order) {
      const N& x = nodes[static_cast<size_t>(n)];
      json next = json::array();
      for (int k : x.next) next.push_back(k < 0 ? json{nullptr, 0} : json{"n" + std::to_string(id[k]), 0});
      out.push_back({{"id", "n" + std::to_string(id[n])}, {"name", x.name}, {"tensors", x.tensors}, {"next", next}});
    }
    return out;
  }
};

const json kOneCheck = json::parse(R"([{"id": "g", "kind": "graph", "tensor": "out", "name": "n"}])");

grader::Rubric rubric(bool distributes = false) {
  json j = {{"rubric", 1}, {"exercise", "e"}, {"title", "t"}, {"function", "e"}, {"checks", kOneCheck}};
  j["alternatives"] = json::parse(R"([["PowBackward0", "MulBackward0"]])");
  if (distributes) j["graph_rules"] = {"sum_distributes"};
  return grader::parse_rubric(j, "r.json");
}

bool same(const Graph& a, const Graph& b, const grader::Rubric& r = rubric(), const json& tensors = nullptr) {
  return grader::same_normal_form(a.done(), tensors, b.done(), tensors, r);
}

json shapes(std::map<std::string, json> s) {
  json t = json::object();
  for (const auto& [k, v] : s) t[k] = {{"shape", v}};
  return t;
}

}  // namespace

TEST_CASE("a power is a power however it is written", "[checks][graph][normal]") {
  Graph pow3, xxx, x2x, xy;
  pow3.op("PowBackward0", {pow3.leaf("x")}, {"z"});
  {
    const int x = xxx.leaf("x");
    xxx.op("MulBackward0", {xxx.op("MulBackward0", {x, x}), x}, {"z"});  // x * x * x
  }
  {
    const int x = x2x.leaf("x");
    x2x.op("MulBackward0", {x, x2x.op("PowBackward0", {x})}, {"z"});  // x * x.pow(2)
  }
  {
    const int x = xy.leaf("x");
    xy.op("MulBackward0", {xy.op("MulBackward0", {x, x}), xy.leaf("y")}, {"z"});  // x * x * y
  }
  Graph tensor_exponent, variable_exponent;
  tensor_exponent.op("PowBackward1", {tensor_exponent.leaf("x"), -1}, {"z"});  // x.pow(torch::tensor(3.))
  variable_exponent.op("PowBackward1", {variable_exponent.leaf("x"), variable_exponent.leaf("y")}, {"z"});  // x ** y
  CHECK(same(xxx, pow3));
  CHECK(same(x2x, pow3));
  CHECK(same(tensor_exponent, pow3));
  CHECK_FALSE(same(variable_exponent, pow3));
  CHECK_FALSE(same(xy, pow3));
  CHECK(grader::normal_form_text(xxx.done(), nullptr, rubric()) == "z=Pow(x)");
  CHECK(grader::normal_form_text(xy.done(), nullptr, rubric()) == "z=Mul{y, Pow(x)}");

  // When the forms differ, each side's node is called by its own name.
  auto d = grader::compare_graphs(xy.done(), pow3.done(), rubric());
  REQUIRE_FALSE(d.differences.empty());
  CHECK_THAT(d.differences[0], Catch::Contains("the submission's MulBackward0"));
  CHECK_THAT(d.differences[0], Catch::Contains("the reference's PowBackward0"));
}

TEST_CASE("sums and products are flattened and their operands taken in any order", "[checks][graph][normal]") {
  Graph left, right, other;
  left.op("AddBackward0", {left.op("AddBackward0", {left.leaf("a"), left.leaf("b")}), left.leaf("c")}, {"s"});
  right.op("AddBackward0", {right.leaf("c"), right.op("AddBackward0", {right.leaf("b"), right.leaf("a")})}, {"s"});
  other.op("AddBackward0", {other.op("AddBackward0", {other.leaf("a"), other.leaf("a")}), other.leaf("c")}, {"s"});
  CHECK(same(left, right));
  CHECK_FALSE(same(left, other));
  // A sum is not a product, nor a difference.
  Graph mul, sub;
  mul.op("MulBackward0", {mul.op("AddBackward0", {mul.leaf("a"), mul.leaf("b")}), mul.leaf("c")}, {"s"});
  sub.op("AddBackward0", {sub.op("SubBackward0", {sub.leaf("a"), sub.leaf("b")}), sub.leaf("c")}, {"s"});
  CHECK_FALSE(same(left, mul));
  CHECK_FALSE(same(left, sub));
}

TEST_CASE("a named intermediate stays a node of its own", "[checks][graph][normal]") {
  // Reference: q = p + y named, f = q * z. A submission that computed q
  // separately and f = (p + y) * z has no q in f's graph.
  Graph ref, separate, regrouped;
  ref.op("MulBackward0",
         {ref.op("AddBackward0", {ref.op("PowBackward0", {ref.leaf("x")}, {"p"}), ref.leaf("y")}, {"q"}), ref.leaf("z")},
         {"f"});
  separate.op("MulBackward0",
              {separate.op("AddBackward0", {separate.op("PowBackward0", {separate.leaf("x")}, {"p"}), separate.leaf("y")}),
               separate.leaf("z")},
              {"f"});
  CHECK_FALSE(same(separate, ref));
  // Flattening does not reach into q: (p + y) + w with q named is not p + (y + w).
  Graph a, b;
  a.op("AddBackward0", {a.op("AddBackward0", {a.leaf("p"), a.leaf("y")}, {"q"}), a.leaf("w")}, {"f"});
  b.op("AddBackward0", {b.leaf("p"), b.op("AddBackward0", {b.leaf("y"), b.leaf("w")})}, {"f"});
  CHECK_FALSE(same(a, b));
  regrouped.op("MulBackward0",
               {regrouped.leaf("z"),
                regrouped.op("AddBackward0", {regrouped.leaf("y"), regrouped.op("MulBackward0", {regrouped.leaf("x"), regrouped.leaf("x")}, {"p"})},
                             {"q"})},
               {"f"});
  CHECK(same(regrouped, ref));
}

TEST_CASE("the sum of a sum is the sum of the sums only where the rubric allows", "[checks][graph][normal]") {
  // out = (y + z).sum() against y.sum() + z.sum(), y a leaf of its own.
  Graph whole, parts;
  whole.op("SumBackward0", {whole.op("AddBackward0", {whole.leaf("y"), whole.op("PowBackward0", {whole.leaf("x")}, {"z"})})}, {"out"});
  parts.op("AddBackward0", {parts.op("SumBackward0", {parts.leaf("y")}),
                            parts.op("SumBackward0", {parts.op("PowBackward0", {parts.leaf("x")}, {"z"})})}, {"out"});
  CHECK_FALSE(same(parts, whole));
  CHECK(same(parts, whole, rubric(true)));
  // Not a licence for anything: the sum of a product is not the product of sums.
  Graph product;
  product.op("MulBackward0", {product.op("SumBackward0", {product.leaf("y")}),
                             product.op("SumBackward0", {product.op("PowBackward0", {product.leaf("x")}, {"z"})})},
             {"out"});
  CHECK_FALSE(same(product, whole, rubric(true)));
}

TEST_CASE("a sum over every dimension is sum() when its result is a scalar", "[checks][graph][normal]") {
  Graph all, dims;
  all.op("SumBackward0", {all.op("TanhBackward0", {all.leaf("w")}, {"h"})}, {"out"});
  dims.op("SumBackward1", {dims.op("TanhBackward0", {dims.leaf("w")}, {"h"})}, {"out"});
  CHECK(same(dims, all, rubric(), shapes({{"out", json::array()}, {"h", {3, 1}}})));
  // A sum over some dimensions leaves a tensor: a different operation.
  CHECK_FALSE(same(dims, all, rubric(), shapes({{"out", {3}}, {"h", {3, 1}}})));
  // Without the result's shape nothing is assumed.
  CHECK_FALSE(same(dims, all));
  CHECK(grader::reduction_name("SumBackward1", true) == "SumBackward0");
  CHECK(grader::reduction_name("SumBackward1", false) == "SumBackward1");
  CHECK(grader::reduction_name("MeanBackward1", true) == "MeanBackward0");
  // The sum of a sum over some dimensions is the sum of it all: L.sum(0).sum().
  Graph twice;
  twice.op("SumBackward0", {twice.op("SumBackward1", {twice.op("TanhBackward0", {twice.leaf("w")}, {"h"})})}, {"out"});
  CHECK(same(twice, all, rubric(), shapes({{"out", json::array()}, {"h", {3, 1}}})));
  // Not a mean of a sum, nor a sum of a partial mean.
  Graph mean_of_sum;
  mean_of_sum.op("MeanBackward0", {mean_of_sum.op("SumBackward1", {mean_of_sum.op("TanhBackward0", {mean_of_sum.leaf("w")}, {"h"})})}, {"out"});
  CHECK_FALSE(same(mean_of_sum, all, rubric(), shapes({{"out", json::array()}, {"h", {3, 1}}})));
}

TEST_CASE("normal forms stay linear on deep and much-shared graphs", "[checks][graph][normal]") {
  // 5000 nested products (the snapshot check's depth limit), then 60
  // squarings of a square: 2^60 paths, 60 distinct nodes.
  Graph deep, shared;
  int n = deep.leaf("x");
  for (int i = 0; i < 5000; ++i) n = deep.op("ExpBackward0", {n});
  deep.op("SumBackward0", {n}, {"out"});
  CHECK(same(deep, deep));
  n = shared.leaf("x");
  for (int i = 0; i < 60; ++i) n = shared.op("AddBackward0", {n, n});
  shared.op("SumBackward0", {n}, {"out"});
  CHECK(same(shared, shared));
  CHECK(grader::normal_form_text(shared.done(), nullptr, rubric()).size() < 20000);
}

TEST_CASE("rubrics name only known graph rules", "[checks][graph][normal]") {
  json j = {{"rubric", 1}, {"exercise", "e"}, {"title", "t"}, {"function", "e"}, {"checks", kOneCheck}};
  j["graph_rules"] = {"sum_distribute"};
  CHECK_THROWS_WITH(grader::parse_rubric(j, "r.json"), Catch::Contains("unknown graph rule \"sum_distribute\""));
}

TEST_CASE("a grad_fn check takes a scalar's sum over its dimensions for sum()", "[checks][normal]") {
  json j = {{"rubric", 1}, {"exercise", "e"}, {"title", "t"}, {"function", "e"}};
  j["checks"] = json::parse(R"([{"id": "g", "kind": "grad_fn", "tensor": "out", "name": "n"}])");
  const auto r = grader::parse_rubric(j, "r.json");
  auto doc = [](const char* grad_fn, json shape) {
    json s;
    s["status"] = "ok";
    s["tensors"]["out"] = {{"defined", true}, {"shape", shape}, {"dtype", "Float"}, {"device", "cpu"},
                           {"requires_grad", true}, {"is_leaf", false}, {"retains_grad", false},
                           {"grad_fn", grad_fn}, {"version", 0}, {"values", {1.0}}, {"grad", nullptr}};
    s["records"] = json::array();
    return s;
  };
  CHECK(grader::evaluate(r, doc("SumBackward1", json::array()), doc("SumBackward0", json::array()))[0].status == grader::CheckStatus::Passed);
  CHECK(grader::evaluate(r, doc("SumBackward1", {1}), doc("SumBackward0", json::array()))[0].status == grader::CheckStatus::Failed);
  CHECK(grader::evaluate(r, doc("MeanBackward0", json::array()), doc("SumBackward0", json::array()))[0].status == grader::CheckStatus::Failed);
}

TEST_CASE("a difference is a sum with a negated operand, however it is spelled", "[checks][graph][normal]") {
  // L = 10 - d in four spellings: 10 - d (rsub), -d + 10, torch::rsub(d, 10), and d's negation summed with 10.
  Graph rsub, negplus, sub, minus_d, plus_d;
  rsub.op("RsubBackward1", {rsub.op("MmBackward0", {rsub.leaf("w"), -1}, {"d"})}, {"L"});
  negplus.op("AddBackward1", {negplus.op("NegBackward0", {negplus.op("MmBackward0", {negplus.leaf("w"), -1}, {"d"})})}, {"L"});
  sub.op("SubBackward0", {-1, sub.op("MmBackward0", {sub.leaf("w"), -1}, {"d"})}, {"L"});
  minus_d.op("NegBackward0", {minus_d.op("MmBackward0", {minus_d.leaf("w"), -1}, {"d"})}, {"L"});
  plus_d.op("AddBackward1", {plus_d.op("MmBackward0", {plus_d.leaf("w"), -1}, {"d"})}, {"L"});
  CHECK(same(rsub, negplus));
  CHECK(same(rsub, sub));
  CHECK(grader::normal_form_text(rsub.done(), nullptr, rubric()) == "L=Mul{Number, d=MmBackward0(w, None)}");
  // 10 + d is not 10 - d. A constant added changes no gradient and no
  // graph: -d is 10 - d here, and the value checks tell them apart (so is
  // 0 - d, red team 16's honest g_loss = 0 - Σs).
  CHECK_FALSE(same(rsub, plus_d));
  CHECK(same(rsub, minus_d));
  // A negated difference, -(d - 10), is 10 - d: the negation spreads over the sum.
  Graph neg_diff;
  neg_diff.op("NegBackward0", {neg_diff.op("SubBackward1", {neg_diff.op("MmBackward0", {neg_diff.leaf("w"), -1}, {"d"})})},
              {"L"});
  CHECK(same(neg_diff, rsub));
  // But a constant is no licence to drop a tensor that carries a gradient.
  Graph with_y;
  with_y.op("AddBackward0", {with_y.leaf("y"), with_y.op("NegBackward0", {with_y.op("MmBackward0", {with_y.leaf("w"), -1}, {"d"})})},
            {"L"});
  CHECK_FALSE(same(with_y, rsub));
  // Σ(−x) is −Σx; a negation is a product with a number (-1.0·x, x·-1), so
  // a negation twice is one too (the number is the value checks' business:
  // the graph cannot tell −(−x) from 2·x).
  Graph sum_neg, neg_sum, neg_neg, plain, times_minus_one, sum_times;
  sum_neg.op("SumBackward0", {sum_neg.op("NegBackward0", {sum_neg.op("SigmoidBackward0", {sum_neg.leaf("x")})})}, {"g"});
  neg_sum.op("NegBackward0", {neg_sum.op("SumBackward0", {neg_sum.op("SigmoidBackward0", {neg_sum.leaf("x")})})}, {"g"});
  neg_neg.op("NegBackward0", {neg_neg.op("NegBackward0", {neg_neg.op("SigmoidBackward0", {neg_neg.leaf("x")})})}, {"g"});
  plain.op("SigmoidBackward0", {plain.leaf("x")}, {"g"});
  times_minus_one.op("MulBackward1", {times_minus_one.op("SigmoidBackward0", {times_minus_one.leaf("x")})}, {"g"});
  sum_times.op("MulBackward1", {sum_times.op("SumBackward0", {sum_times.op("SigmoidBackward0", {sum_times.leaf("x")})})}, {"g"});
  CHECK(same(sum_neg, neg_sum));
  CHECK(same(sum_neg, sum_times));  // -1.0 * sigmoid(x).sum()
  CHECK(same(neg_neg, times_minus_one));
  CHECK_FALSE(same(neg_neg, plain));
  CHECK_FALSE(same(neg_sum, plain));
}
