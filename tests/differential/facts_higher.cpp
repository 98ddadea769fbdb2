// Higher derivatives, engine vs LibTorch: the graphs a backward records
// under create_graph, printed node by node, for the formulas that change
// shape with the data (prod and cumprod with zeros: PyTorch switches to its
// zero-safe forms) or record ops of their own (index_select's index_add_,
// the products' transposes). Built against both; see CMakeLists.txt.
#include "facts_common.h"

using facts::emit;
using facts::fact;
using facts::json;
using torch::Tensor;

namespace {

Tensor leaf(std::vector<double> values, std::vector<int64_t> shape) {
  return torch::tensor(values, torch::kDouble).reshape(shape).requires_grad_(true);
}

void graph(const std::string& label, const Tensor& t) {
  facts::text(label + " graph", facts::graph_desc(t.grad_fn()));
}

// What of a derivative is compared beyond the values: everything, or
// neither the second derivative's graph (where the engine's still differs:
// see the engine issue's notes) nor the plain gradient's version (PyTorch's
// in-place bookkeeping of cumprod's masked algorithm, which the engine runs
// on the host).
enum class Compare { All, NotSecondGraph };

// The gradient of f(x).sum() with create_graph (its value, its graph), the
// gradient of that gradient's squares, and the plain gradient.
void derivatives(const std::string& label, const Tensor& x, const std::function<Tensor(const Tensor&)>& f,
                 Compare compare = Compare::All) {
  const Tensor g = torch::autograd::grad({f(x).sum()}, {x}, {}, true, true)[0];
  fact(label + ": gradient", g);
  graph(label + ": gradient", g);
  if (g.requires_grad()) {
    const Tensor gg = torch::autograd::grad({(g * g).sum()}, {x}, {}, true, true, true)[0];
    if (compare == Compare::NotSecondGraph) {
      emit(label + ": second", json{{"values", facts::values(gg)}});
    } else {
      fact(label + ": second", gg);
      graph(label + ": second", gg);
    }
  }
  const Tensor plain = torch::autograd::grad({f(x).sum()}, {x})[0];
  if (compare == Compare::All) fact(label + ": plain gradient", plain);
  else emit(label + ": plain gradient", json{{"values", facts::values(plain)}});
}

void products_with_zeros() {
  auto prod = [](const Tensor& t) { return t.prod(); };
  derivatives("prod, one zero", leaf({2, 0, 3, 4}, {4}), prod);
  derivatives("prod, two zeros", leaf({2, 0, 3, 0}, {2, 2}), prod);
  derivatives("prod, no zero", leaf({2, 1.5, 3, 4}, {2, 2}), prod);
  derivatives("prod(1), a zero", leaf({2, 0, 3, 4, 5, 6}, {2, 3}), [](const Tensor& t) { return t.prod(1); });
  derivatives("prod(0, keepdim), zeros", leaf({2, 0, 3, 4, 0, 6}, {2, 3}),
              [](const Tensor& t) { return t.prod(0, true); });
  derivatives("prod over a size-1 dim", leaf({2, 0, 3}, {3, 1}), [](const Tensor& t) { return t.prod(1); });
  derivatives("prod of a transpose, one zero", leaf({2, 0, 3, 4, 5, 6}, {2, 3}),
              [](const Tensor& t) { return t.t().prod(); }, Compare::NotSecondGraph);
  const Tensor inf = torch::tensor({0.0f, 0.0f, INFINITY}).requires_grad_(true);
  fact("prod of [0, 0, inf]: gradient", torch::autograd::grad({inf.prod()}, {inf})[0]);
}

void cumulative_products_with_zeros() {
  const Compare partly = Compare::NotSecondGraph;
  derivatives("cumprod, a zero", leaf({2, 0, 3, 4}, {4}), [](const Tensor& t) { return t.cumprod(0); }, partly);
  derivatives("cumprod(1), zeros", leaf({2, 0, 3, 4, 5, 0}, {2, 3}), [](const Tensor& t) { return t.cumprod(1); },
              partly);
  derivatives("cumprod(0), zeros", leaf({2, 0, 3, 4, 5, 0}, {3, 2}), [](const Tensor& t) { return t.cumprod(0); },
              partly);
  derivatives("cumprod, two zeros", leaf({2, 0, 3, 0, 5}, {5}), [](const Tensor& t) { return t.cumprod(0); }, partly);
  derivatives("cumprod, no zero", leaf({2, 0.5, 3, 4}, {4}), [](const Tensor& t) { return t.cumprod(0); });
}

void selections_and_matrix_products() {
  torch::manual_seed(0);
  const Tensor index = torch::tensor({0, 2, 2}, torch::kLong);
  derivatives("index_select(0), a repeat", torch::randn({3, 2}, torch::kDouble).requires_grad_(true),
              [&](const Tensor& t) { return t.index_select(0, index).pow(2); });
  derivatives("index_select(1)", torch::randn({2, 3}, torch::kDouble).requires_grad_(true),
              [&](const Tensor& t) { return torch::index_select(t, 1, index).exp(); });
  const Tensor b = torch::randn({3, 2}, torch::kDouble).requires_grad_(true);
  derivatives("mm", torch::randn({2, 3}, torch::kDouble).requires_grad_(true),
              [&](const Tensor& a) { return a.mm(b).pow(2); });
  const Tensor bb = torch::randn({2, 3, 2}, torch::kDouble).requires_grad_(true);
  derivatives("bmm", torch::randn({2, 2, 3}, torch::kDouble).requires_grad_(true),
              [&](const Tensor& a) { return a.bmm(bb).pow(2); });
}

// Found by the fuzzer: how a formula writes its gradient shows in the
// gradient's version (an in-place fill is one step) and, under create_graph,
// in its node. max()'s even split fills zeros in place on the CPU, maximum's
// masks in place, select's writes below autograd (no step).
void formulas_in_place() {
  const Tensor x = leaf({-1.25, 1.875, 1.875, 0.5}, {4});
  derivatives("max(), a tie", x, [](const Tensor& t) { return t.max(); });
  derivatives("maximum, a tie", x, [](const Tensor& t) { return torch::maximum(t, t.flip(0)); });
  derivatives("select", leaf({2, -1, 3, 0.5, 4, 1}, {2, 3}), [](const Tensor& t) { return t[1].pow(2); });
  const Tensor n = leaf({2, 3, 1, -2}, {4});
  fact("select of a negation: gradient", torch::autograd::grad({n.neg()[0].sum()}, {n})[0]);
}

}  // namespace

int main() {
  products_with_zeros();
  cumulative_products_with_zeros();
  selections_and_matrix_products();
  formulas_in_place();
}
